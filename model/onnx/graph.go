package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// graph accumulates nodes and initializers. Node outputs get generated,
// readable names ("layers.3/attn/Softmax_17") from the current scope so a
// graph dumped by Netron or ORT's verbose log can be traced to its code.
type graph struct {
	nodes   []*onnxpb.NodeProto
	inits   []*onnxpb.TensorProto
	inputs  []*onnxpb.ValueInfoProto
	outputs []*onnxpb.ValueInfoProto
	scope   string
	seq     int
	consts  map[string]string // memoised small int64/float constants by key
}

func newGraph() *graph { return &graph{consts: map[string]string{}} }

// name returns a fresh value name in the current scope.
func (g *graph) name(op string) string {
	g.seq++
	if g.scope == "" {
		return fmt.Sprintf("%s_%d", op, g.seq)
	}
	return fmt.Sprintf("%s/%s_%d", g.scope, op, g.seq)
}

// op adds a single-output node and returns its output name.
func (g *graph) op(opType string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	return g.opN(opType, 1, inputs, attrs...)[0]
}

// opN adds a node with n outputs and returns their names.
func (g *graph) opN(opType string, n int, inputs []string, attrs ...*onnxpb.AttributeProto) []string {
	base := g.name(opType)
	outs := make([]string, n)
	for i := range outs {
		outs[i] = base
		if n > 1 {
			outs[i] = fmt.Sprintf("%s:%d", base, i)
		}
	}
	g.nodes = append(g.nodes, &onnxpb.NodeProto{
		Name: proto.String(base), OpType: proto.String(opType),
		Input: inputs, Output: outs, Attribute: attrs,
	})
	return outs
}

// msDomain is ONNX Runtime's contrib operator domain (see Fusion).
const msDomain = "com.microsoft"

// msOp adds a node of ONNX Runtime's com.microsoft domain with n outputs,
// of which only those listed in want are named (the others, optional, are
// left out with ""), and returns the output names by index.
func (g *graph) msOp(opType string, n int, want []int, inputs []string, attrs ...*onnxpb.AttributeProto) []string {
	base := g.name(opType)
	outs := make([]string, n)
	for _, i := range want {
		outs[i] = fmt.Sprintf("%s:%d", base, i)
	}
	g.nodes = append(g.nodes, &onnxpb.NodeProto{
		Name: proto.String(base), OpType: proto.String(opType), Domain: proto.String(msDomain),
		Input: inputs, Output: outs, Attribute: attrs,
	})
	return outs
}

// opTo adds a single-output node whose output has a fixed name (a graph output).
func (g *graph) opTo(out, opType string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	g.nodes = append(g.nodes, &onnxpb.NodeProto{
		Name: proto.String(out), OpType: proto.String(opType),
		Input: inputs, Output: []string{out}, Attribute: attrs,
	})
	return out
}

// floatInit adds a float32 initializer. Its raw bytes alias data on
// little-endian machines (no copy of multi-gigabyte weights).
func (g *graph) floatInit(name string, shape []int, data []float32) string {
	g.inits = append(g.inits, &onnxpb.TensorProto{
		Name: proto.String(name), Dims: dims64(shape),
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), RawData: float32Bytes(data),
	})
	return name
}

// ints returns a 1-D int64 constant initializer, shared between callers
// asking for the same values.
func (g *graph) ints(vals ...int64) string {
	return g.intsShaped([]int{len(vals)}, vals...)
}

// scalarInt returns a 0-D int64 constant (for Range and other scalar inputs).
func (g *graph) scalarInt(v int64) string { return g.intsShaped(nil, v) }

func (g *graph) intsShaped(shape []int, vals ...int64) string {
	key := fmt.Sprintf("i%v%v", shape, vals)
	if n, ok := g.consts[key]; ok {
		return n
	}
	raw := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
	}
	n := fmt.Sprintf("const_i64_%d", len(g.consts))
	g.consts[key] = n
	g.inits = append(g.inits, &onnxpb.TensorProto{
		Name: proto.String(n), Dims: dims64(shape),
		DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), RawData: raw,
	})
	return n
}

// scalarFloat returns a 0-D float32 constant.
func (g *graph) scalarFloat(v float32) string {
	key := fmt.Sprintf("f%x", math.Float32bits(v))
	if n, ok := g.consts[key]; ok {
		return n
	}
	n := fmt.Sprintf("const_f32_%d", len(g.consts))
	g.consts[key] = n
	g.inits = append(g.inits, &onnxpb.TensorProto{
		Name: proto.String(n), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
		RawData: binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)),
	})
	return n
}

// input declares a graph input; dims are ints (fixed) or strings (symbolic).
func (g *graph) input(name string, elem onnxpb.TensorProto_DataType, dims ...any) string {
	g.inputs = append(g.inputs, valueInfo(name, elem, dims...))
	return name
}

// output declares a graph output.
func (g *graph) output(name string, elem onnxpb.TensorProto_DataType, dims ...any) {
	g.outputs = append(g.outputs, valueInfo(name, elem, dims...))
}

func valueInfo(name string, elem onnxpb.TensorProto_DataType, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		switch d := d.(type) {
		case int:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}
		case string:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}
		default:
			panic(fmt.Sprintf("onnx: dimension %v of %s is neither int nor string", d, name))
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(elem)), Shape: shape,
		}}},
	}
}

func (g *graph) proto(name, doc string) *onnxpb.GraphProto {
	return &onnxpb.GraphProto{
		Name: proto.String(name), DocString: proto.String(doc),
		Node: g.nodes, Initializer: g.inits, Input: g.inputs, Output: g.outputs,
	}
}

// Attribute constructors.

func attrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func attrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func dims64(shape []int) []int64 {
	d := make([]int64, len(shape))
	for i, v := range shape {
		d[i] = int64(v)
	}
	return d
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float32Bytes returns f as little-endian bytes, aliasing f where the
// machine is little-endian. Callers must not modify either afterwards.
func float32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
	}
	b := make([]byte, 0, 4*len(f))
	for _, v := range f {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}
