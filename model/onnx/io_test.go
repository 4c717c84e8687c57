package onnx

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

func ioValue(name string, elem int32, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		switch v := d.(type) {
		case int:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}})
		case string:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: v}})
		}
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{
		Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(elem), Shape: shape}}}}
}

// TestParseIO: inputs that are initializers (as older exporters list their
// weights) are left out, as ONNX Runtime leaves them out; symbolic
// dimensions read -1; a non-tensor value is marked; embedded weight bytes
// are skipped, not decoded.
func TestParseIO(t *testing.T) {
	m := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: &onnxpb.GraphProto{
		Input: []*onnxpb.ValueInfoProto{ioValue("input_ids", 7, "batch", "seq"), ioValue("w", 1, 4, 4)},
		Output: []*onnxpb.ValueInfoProto{ioValue("logits", 1, "batch"),
			{Name: proto.String("seq_out"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{}}}}},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{4, 4}, RawData: make([]byte, 64)}},
	}}
	raw, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	in, out, err := parseIO(raw)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []IO{{Name: "input_ids", ElemType: 7, Dims: []int64{-1, -1}}}
	wantOut := []IO{{Name: "logits", ElemType: 1, Dims: []int64{-1}}, {Name: "seq_out", NonTensor: true}}
	if !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(out, wantOut) {
		t.Errorf("got %+v %+v, want %+v %+v", in, out, wantIn, wantOut)
	}
	for _, bad := range [][]byte{nil, []byte("plain text"), raw[:len(raw)/2]} {
		if _, _, err := parseIO(bad); err == nil {
			t.Errorf("parseIO(%q) accepted", bad)
		}
	}
}

// FuzzParseIO: any bytes give an answer or an error, never a panic.
func FuzzParseIO(f *testing.F) {
	m := &onnxpb.ModelProto{Graph: &onnxpb.GraphProto{Input: []*onnxpb.ValueInfoProto{ioValue("x", 1, 2, "n")}}}
	raw, _ := proto.Marshal(m)
	f.Add(raw)
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x5a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, out, err := parseIO(b)
		if err != nil && (in != nil || out != nil) {
			t.Fatal("values returned with an error")
		}
	})
}
