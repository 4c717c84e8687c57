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
func BuildMatMulChain(n, dim int) *Model { return BuildQuantChain(n, dim, QuantNone) }

// BuildQuantChain is BuildMatMulChain with the weights stored and
// multiplied as q selects (the same seeded weights, quantised), so the
// throughput of a quantised model can be compared with its own kernel's.
func BuildQuantChain(n, dim int, q Quant) *Model {
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
		name := fmt.Sprintf("w%d", i)
		if q == QuantNone {
			x = g.op("MatMul", []string{x, g.floatInit(name, []int{dim, dim}, w)})
		} else {
			// quantLinear takes W in [out, in] layout: pass Wᵀ so every kind
			// computes the same x·W.
			wt := make([]float32, len(w))
			for r := range dim {
				for c := range dim {
					wt[c*dim+r] = w[r*dim+c]
				}
			}
			x = g.quantLinear(x, name, []int{dim, dim}, wt, q.forTensor(name))
		}
	}
	g.opTo("y", "Identity", []string{x})
	g.output("y", onnxpb.TensorProto_FLOAT, "batch", dim)
	doc := fmt.Sprintf("MatMul chain (%v): %d x [%d, %d], %d FLOPs per row", q, n, dim, dim, 2*n*dim*dim)
	return newModel(g, "rerankd_matmul_chain", doc, DefaultStorage())
}
