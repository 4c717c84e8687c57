package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/model/onnx"
	ort "github.com/yalue/onnxruntime_go"
)

// PeakGFLOPs measures the machine's practical matrix throughput through
// ONNX Runtime with the same session settings a model would get: a chain of
// `layers` [dim, dim] MatMuls over `rows` rows, run repeatedly for at least
// `d`; the rate of the best of its short windows. A model's achieved GFLOP/s divided by this is its efficiency. With a
// quantised q the chain uses that kind's kernels, and the figure counts
// the same 2·dim² FLOPs per row and layer (what the float product would
// cost), so it compares directly with the float peak.
func PeakGFLOPs(cfg SessionConfig, q onnx.Quant, layers, dim, rows int, d time.Duration) (float64, error) {
	dir, err := os.MkdirTemp("", "rerankd-peak-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // scratch space
	if err := onnx.BuildQuantChain(layers, dim, q).Save(dir); err != nil {
		return 0, err
	}
	opts, err := cfg.options()
	if err != nil {
		return 0, err
	}
	defer release(opts)
	sess, err := ort.NewDynamicAdvancedSession(filepath.Join(dir, onnx.ModelFile), []string{"x"}, []string{"y"}, opts)
	if err != nil {
		return 0, fmt.Errorf("peak: %w", err)
	}
	defer release(sess)
	x := make([]float32, rows*dim)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	in, err := ort.NewTensor(ort.NewShape(int64(rows), int64(dim)), x)
	if err != nil {
		return 0, err
	}
	defer release(in)
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(rows), int64(dim)))
	if err != nil {
		return 0, err
	}
	defer release(out)
	run := func() error { return sess.Run([]ort.Value{in}, []ort.Value{out}) }
	if err := run(); err != nil { // warm-up: allocation, prepacking
		return 0, fmt.Errorf("peak: %w", err)
	}
	// The best of several short windows: on a shared machine a long average
	// measures the neighbours too, and a peak is what the hardware can do.
	perRun := 2 * float64(layers) * float64(dim) * float64(dim) * float64(rows)
	window := max(d/8, time.Millisecond)
	best, begin := 0.0, time.Now()
	for windows := 0; time.Since(begin) < d || windows < 3; windows++ {
		n, start := 0, time.Now()
		for time.Since(start) < window || n < 1 {
			if err := run(); err != nil {
				return 0, fmt.Errorf("peak: %w", err)
			}
			n++
		}
		best = max(best, perRun*float64(n)/time.Since(start).Seconds()/1e9)
	}
	return best, nil
}
