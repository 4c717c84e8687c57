package onnx

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Model is an ONNX model ready to Save. Initializers hold their data in
// RawData (aliasing the source weights where possible) until Save decides
// whether to move it to an external file.
type Model struct {
	Proto *onnxpb.ModelProto
	// Storage decides the on-disk layout; change it freely before Save.
	Storage Storage
}

func (m *Model) setMeta(key, value string) {
	m.Proto.MetadataProps = append(m.Proto.MetadataProps,
		&onnxpb.StringStringEntryProto{Key: proto.String(key), Value: proto.String(value)})
}

// Meta returns a metadata_props value and whether it is present.
func (m *Model) Meta(key string) (string, bool) {
	for _, p := range m.Proto.GetMetadataProps() {
		if p.GetKey() == key {
			return p.GetValue(), true
		}
	}
	return "", false
}

// InitializerBytes is the total size of the initializers' data.
func (m *Model) InitializerBytes() int64 {
	var n int64
	for _, t := range m.Proto.GetGraph().GetInitializer() {
		n += int64(len(t.GetRawData()))
	}
	return n
}

var elemSize = map[onnxpb.TensorProto_DataType]int64{
	onnxpb.TensorProto_FLOAT: 4, onnxpb.TensorProto_INT64: 8, onnxpb.TensorProto_BOOL: 1,
	onnxpb.TensorProto_INT8: 1, onnxpb.TensorProto_UINT8: 1, onnxpb.TensorProto_FLOAT16: 2, onnxpb.TensorProto_BFLOAT16: 2,
}

// Check validates the graph structurally, reporting every problem: versions
// set, every node input produced by an earlier node, an initializer or a
// graph input (nodes are in topological order), no value defined twice,
// every graph output produced, and each inline initializer's data matching
// its shape and type.
func (m *Model) Check() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	p := m.Proto
	if p.GetIrVersion() == 0 || len(p.GetOpsetImport()) == 0 {
		add("ir_version or opset_import missing")
	}
	g := p.GetGraph()
	if g == nil {
		return errors.New("model has no graph")
	}
	defined := map[string]bool{}
	define := func(name, what string) {
		if name == "" {
			add("%s with an empty name", what)
		} else if defined[name] {
			add("%s %q defined twice", what, name)
		}
		defined[name] = true
	}
	for _, in := range g.GetInput() {
		define(in.GetName(), "graph input")
	}
	for _, t := range g.GetInitializer() {
		define(t.GetName(), "initializer")
		if err := checkTensor(t); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			if in != "" && !defined[in] {
				add("node %s (%s): input %q is not defined before it", n.GetName(), n.GetOpType(), in)
			}
		}
		for _, out := range n.GetOutput() {
			if out != "" { // an optional output left out
				define(out, "node output")
			}
		}
	}
	for _, out := range g.GetOutput() {
		if !defined[out.GetName()] {
			add("graph output %q is never produced", out.GetName())
		}
	}
	return errors.Join(errs...)
}

// checkTensor checks an initializer's data size against its shape.
func checkTensor(t *onnxpb.TensorProto) error {
	size, ok := elemSize[onnxpb.TensorProto_DataType(t.GetDataType())]
	if !ok {
		return fmt.Errorf("initializer %s: unsupported data type %d", t.GetName(), t.GetDataType())
	}
	n := size
	for _, d := range t.GetDims() {
		if d < 0 {
			return fmt.Errorf("initializer %s: negative dimension in %v", t.GetName(), t.GetDims())
		}
		n *= d
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		ext, err := externalRef(t)
		if err != nil {
			return err
		}
		if ext.length != n {
			return fmt.Errorf("initializer %s: external length %d, want %d", t.GetName(), ext.length, n)
		}
		return nil
	}
	if int64(len(t.GetRawData())) != n {
		return fmt.Errorf("initializer %s: %d bytes of data, want %d for dims %v",
			t.GetName(), len(t.GetRawData()), n, t.GetDims())
	}
	return nil
}
