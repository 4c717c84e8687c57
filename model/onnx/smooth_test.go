package onnx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/ref"
)

// calibrate fills a Calibration for w from seeded random sequences.
func calibrate(t testing.TB, w *arch.Weights, seqs int) *Calibration {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	c := &Calibration{}
	for range seqs {
		ids := make([]int, 12)
		for i := range ids {
			ids[i] = rng.IntN(w.Config.VocabSize)
		}
		if err := ref.ProjectionInputs(w, ids, c.Add); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// withOutliers scales a few channels of every RMSNorm gain that feeds
// projections, as trained models' outlier channels: random weights have
// none, and smoothing has nothing to move without them.
func withOutliers(w *arch.Weights, factor float32, channels ...int) {
	for l := range w.Config.NumHiddenLayers {
		for norm := range smoothed {
			g := w.Tensors[arch.LayerTensor(l, norm)].Data
			for _, c := range channels {
				g[c] *= factor
			}
		}
	}
}

// TestSmooth: smoothing computes the same function in float32 (the
// factors cancel between gain and weights), and on weights with outlier
// channels the alpha search finds a smoothing that cuts the int8 error
// of the projections clearly below no smoothing; without outliers it
// changes little either way.
func TestSmooth(t *testing.T) {
	c := smallConfig(false)
	c.HiddenSize, c.IntermediateSize = 64, 96
	for _, tc := range []struct {
		name     string
		outliers bool
	}{{"outliers", true}, {"random", false}} {
		t.Run(tc.name, func(t *testing.T) {
			w := randomWeights(t, c)
			if tc.outliers {
				withOutliers(w, 40, 3, 17, 41)
			}
			cal := calibrate(t, w, 3)
			sw, changed := smoothWeights(w, cal, 0.5)
			if len(changed) != c.NumHiddenLayers*7 { // 2 gains + q, k, v, gate, up per layer
				t.Errorf("changed %d tensors, want %d", len(changed), c.NumHiddenLayers*7)
			}
			ids := []int{1, 7, 3, 22, 9, 4}
			a, err := ref.FinalHidden(w, ids)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ref.FinalHidden(sw, ids)
			if err != nil {
				t.Fatal(err)
			}
			for i := range a {
				if d := math.Abs(float64(a[i] - b[i])); d > 1e-4*(1+math.Abs(float64(a[i]))) {
					t.Fatalf("hidden[%d]: smoothed %g, original %g", i, b[i], a[i])
				}
			}
			alpha, errs := ChooseSmoothAlpha(w, cal)
			t.Logf("alpha %v; errors (none, %v): %.4g", alpha, SmoothAlphas, errs)
			best := errs[0]
			for _, e := range errs[1:] {
				best = min(best, e)
			}
			if tc.outliers && (alpha < 0 || best > 0.6*errs[0]) {
				t.Errorf("with outliers: alpha %v, best error %.4g vs none %.4g: want below 0.6x", alpha, best, errs[0])
			}
			if !tc.outliers && best < 0.5*errs[0] {
				t.Errorf("random weights: smoothing cut the error to %.4g from %.4g: the measure is suspect", best, errs[0])
			}
		})
	}
}

// TestSmoothOptions: int8-smooth without a calibration, or with one of
// another model's width, is refused by name.
func TestSmoothOptions(t *testing.T) {
	w := randomWeights(t, smallConfig(false))
	o := NewOptions(testYes, testNo)
	o.Quant = QuantInt8Smooth
	if _, err := BuildReranker(w, o); err == nil {
		t.Error("no calibration: want an error")
	}
	o.Calibration = &Calibration{ActMax: map[string][]float32{arch.LayerTensor(0, arch.InputNorm): make([]float32, 5)}}
	if _, err := BuildSharedPrefix(w, o); err == nil {
		t.Error("wrong width: want an error")
	}
	o.Calibration, o.SmoothAlpha = calibrate(t, w, 1), 1.5
	if _, err := BuildReranker(w, o); err == nil {
		t.Error("alpha 1.5: want an error")
	}
}
