package onnx

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// IO is one graph input or output as ONNX Runtime reports it: its name,
// element type (onnxpb.TensorProto_DataType, whose numbers ONNX Runtime's
// element types share) and dimensions, -1 where symbolic. NonTensor marks
// a value that is not a tensor (a sequence or map).
type IO struct {
	Name      string
	ElemType  int32
	Dims      []int64
	NonTensor bool
}

// Field numbers of onnx.proto read by ReadIO.
const (
	fieldModelGraph       = 7  // ModelProto.graph
	fieldGraphInitializer = 5  // GraphProto.initializer
	fieldGraphInput       = 11 // GraphProto.input
	fieldGraphOutput      = 12 // GraphProto.output
	fieldTensorName       = 8  // TensorProto.name
)

// ReadIO reads the graph inputs (initializers excluded, as ONNX Runtime
// lists them) and outputs of the model file at path, without decoding its
// weights. It exists because asking ONNX Runtime instead builds a whole
// temporary session, weights and optimisation included: for a 0.6B model
// that was half the time to start serving.
func ReadIO(path string) (inputs, outputs []IO, err error) {
	// A graph exported with its weights inline can be near 2 GB: map it
	// rather than copy it onto the heap (decoded values are copies, so the
	// mapping can go when parsing is done).
	raw, release, err := mapFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("onnx: %w", err)
	}
	defer release()
	if inputs, outputs, err = parseIO(raw); err != nil {
		return nil, nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return inputs, outputs, nil
}

// parseIO is ReadIO on the file's bytes.
func parseIO(raw []byte) (inputs, outputs []IO, err error) {
	graph, err := field(raw, fieldModelGraph)
	if err != nil {
		return nil, nil, err
	}
	if graph == nil {
		return nil, nil, errors.New("not an ONNX model: no graph")
	}
	weights := map[string]bool{}
	var ins, outs []*onnxpb.ValueInfoProto
	err = eachField(graph, func(num protowire.Number, b []byte) error {
		switch num {
		case fieldGraphInitializer:
			name, err := field(b, fieldTensorName)
			if err != nil {
				return err
			}
			weights[string(name)] = true
		case fieldGraphInput, fieldGraphOutput:
			v := &onnxpb.ValueInfoProto{}
			if err := proto.Unmarshal(b, v); err != nil {
				return err
			}
			if num == fieldGraphInput {
				ins = append(ins, v)
			} else {
				outs = append(outs, v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, v := range ins {
		if !weights[v.GetName()] {
			inputs = append(inputs, ioOf(v))
		}
	}
	for _, v := range outs {
		outputs = append(outputs, ioOf(v))
	}
	return inputs, outputs, nil
}

func ioOf(v *onnxpb.ValueInfoProto) IO {
	t := v.GetType().GetTensorType()
	if t == nil {
		return IO{Name: v.GetName(), NonTensor: true}
	}
	io := IO{Name: v.GetName(), ElemType: t.GetElemType(), Dims: []int64{}}
	for _, d := range t.GetShape().GetDim() {
		if x, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok {
			io.Dims = append(io.Dims, x.DimValue)
		} else {
			io.Dims = append(io.Dims, -1)
		}
	}
	return io
}

// eachField calls fn with every length-delimited field of the message b
// (skipping the others), in order.
func eachField(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if err := fn(num, v); err != nil {
				return err
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// field returns the last length-delimited field num of message b (nil when
// absent; protobuf's rule for a repeated singular field).
func field(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	err := eachField(b, func(n protowire.Number, v []byte) error {
		if n == num {
			out = v
		}
		return nil
	})
	return out, err
}
