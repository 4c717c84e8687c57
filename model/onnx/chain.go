package onnx

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// BuildMatMulChain returns a graph y = x·W1·W2·…·Wn for x float32
// [batch, dim] and seeded random [dim, dim] weights scaled by 1/sqrt(dim)
// (so activations keep their magnitude). Timing it through ORT measures the
// machine's practical GFLOP/s: 2·n·dim² FLOPs per row of x. n = 0 gives an
// identity graph. It panics if dim < 1 or n < 0 (a programming error).
func BuildMatMulChain(n, dim int) *Model {
	if dim < 1 || n < 0 {
		panic(fmt.Sprintf("onnx: BuildMatMulChain(%d, %d): need n >= 0 and dim >= 1", n, dim))
	}
	g := newGraph()
	x := g.input("x", onnxpb.TensorProto_FLOAT, "batch", dim)
	rng := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	scale := 1 / math.Sqrt(float64(dim))
	for i := range n {
		w := make([]float32, dim*dim)
		for j := range w {
			w[j] = float32(scale * rng.NormFloat64())
		}
		x = g.op("MatMul", []string{x, g.floatInit(fmt.Sprintf("w%d", i), []int{dim, dim}, w)})
	}
	g.opTo("y", "Identity", []string{x})
	g.output("y", onnxpb.TensorProto_FLOAT, "batch", dim)
	doc := fmt.Sprintf("MatMul chain: %d x [%d, %d], %d FLOPs per row", n, dim, dim, 2*n*dim*dim)
	return newModel(g.proto("rerankd_matmul_chain", doc), doc, DefaultStorage())
}
