package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// BuildHalfChain is BuildMatMulChain computed in a half-precision type
// (onnxpb.TensorProto_FLOAT16 or _BFLOAT16): x is cast to it, multiplied by
// the same seeded weights stored in it, and cast back to float32. It tells
// whether ONNX Runtime has half-precision MatMul kernels for this CPU, and
// how fast they are against float32's.
func BuildHalfChain(n, dim int, elem onnxpb.TensorProto_DataType) *Model {
	var enc func(float32) uint16
	switch elem {
	case onnxpb.TensorProto_FLOAT16:
		enc = hf.Float32ToF16
	case onnxpb.TensorProto_BFLOAT16:
		enc = hf.Float32ToBF16
	default:
		panic(fmt.Sprintf("onnx: BuildHalfChain: %v is not a half-precision type", elem))
	}
	if dim < 1 || n < 0 {
		panic(fmt.Sprintf("onnx: BuildHalfChain(%d, %d): need n >= 0 and dim >= 1", n, dim))
	}
	g := newGraph()
	x := g.input("x", onnxpb.TensorProto_FLOAT, "batch", dim)
	x = g.op("Cast", []string{x}, attrInt("to", int64(elem)))
	rng := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	scale := 1 / math.Sqrt(float64(dim))
	for i := range n {
		raw := make([]byte, 0, 2*dim*dim)
		for range dim * dim {
			raw = binary.LittleEndian.AppendUint16(raw, enc(float32(scale*rng.NormFloat64())))
		}
		name := fmt.Sprintf("w%d", i)
		g.inits = append(g.inits, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims64([]int{dim, dim}),
			DataType: proto.Int32(int32(elem)), RawData: raw})
		x = g.op("MatMul", []string{x, name})
	}
	g.opTo("y", "Cast", []string{x}, attrInt("to", int64(onnxpb.TensorProto_FLOAT)))
	g.output("y", onnxpb.TensorProto_FLOAT, "batch", dim)
	doc := fmt.Sprintf("MatMul chain (%v): %d x [%d, %d], %d FLOPs per row", elem, n, dim, dim, 2*n*dim*dim)
	return newModel(g, "rerankd_half_chain", doc, DefaultStorage())
}
