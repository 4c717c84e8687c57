package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rerankd/rerankd/model/onnx"
)

// TestQuantChainOutliers: on activations with a few outlier channels per
// row (what trained models have and random weights lack), finer scales
// must beat the per-row int8 path by a clear factor, and every kind must
// compute the float32 product within its own bound, so each kernel's
// layout (MatMulNBits codes and scales, the batched group product) is
// what the graph means.
func TestQuantChainOutliers(t *testing.T) {
	const rows, dim = 32, 512
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, rows*dim)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for r := range rows { // 4 channels per row 60x the rest
		for range 4 {
			x[r*dim+rng.IntN(dim)] *= 60
		}
	}
	ref := runChain(t, onnx.BuildQuantChain(1, dim, onnx.QuantNone), x, rows, dim)
	rms := 0.0
	for _, v := range ref {
		rms += float64(v) * float64(v)
	}
	rms = math.Sqrt(rms / float64(len(ref)))
	relErr := map[onnx.Quant]float64{}
	for _, q := range onnx.Quants() {
		got := runChain(t, onnx.BuildQuantChain(1, dim, q), x, rows, dim)
		var se float64
		for i, v := range got {
			se += (float64(v) - float64(ref[i])) * (float64(v) - float64(ref[i]))
		}
		relErr[q] = math.Sqrt(se/float64(len(ref))) / rms
		t.Logf("%v: relative RMS error %.3g", q, relErr[q])
	}
	// Bounds: measured values with ~2x headroom (int8 per row 0.041,
	// block32 0.014, group128 0.024 on this seed).
	for _, c := range []struct {
		q     onnx.Quant
		bound float64
	}{
		{onnx.QuantInt8, 0.08}, {onnx.QuantInt8Mixed, 0.08}, {onnx.QuantInt8Smooth, 0.08}, // a chain has no down projection or norm
		{onnx.QuantInt8Block32, 0.03}, {onnx.QuantInt8SmoothBlock32, 0.03}, {onnx.QuantInt8Group128, 0.05},
	} {
		if relErr[c.q] > c.bound {
			t.Errorf("%v: relative error %.3g > %.3g", c.q, relErr[c.q], c.bound)
		}
	}
	// A block of 32 holds at most a few of the outliers, a group of 128
	// about one: both must cut the per-row error, the block by more.
	for _, c := range []struct {
		q     onnx.Quant
		ratio float64
	}{{onnx.QuantInt8Block32, 0.5}, {onnx.QuantInt8Group128, 0.75}} {
		if relErr[c.q] > c.ratio*relErr[onnx.QuantInt8] {
			t.Errorf("%v: error %.3g not below %.2f x the per-row int8's %.3g", c.q, relErr[c.q], c.ratio, relErr[onnx.QuantInt8])
		}
	}
}
