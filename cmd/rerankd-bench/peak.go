package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// peakGFLOPs measures the machine's practical matrix throughput through
// ONNX Runtime with the same session settings a model would get: a chain of
// `layers` [dim, dim] MatMuls over `rows` rows, run repeatedly for at least
// `d`; the rate of the best of its short windows. A model's achieved
// GFLOP/s divided by this is its efficiency. With a quantised q the chain
// uses that kind's kernels, and the figure counts the same 2·dim² FLOPs per
// row and layer (what the float product would cost), so it compares
// directly with the float peak.
func peakGFLOPs(cfg model.SessionConfig, q onnx.Quant, layers, dim, rows int, d time.Duration) (float64, error) {
	m, err := newPeakMeter(cfg, q, layers, dim, rows)
	if err != nil {
		return 0, err
	}
	defer m.Close() //nolint:errcheck // the measurement is what matters
	return m.Measure(d)
}

// peakMeter keeps peakGFLOPs's chain loaded so a benchmark can measure the
// peak next to each of its own measurements: a shared machine's speed
// drifts by tens of percent over minutes, and an efficiency is only as good
// as the peak measured beside it.
type peakMeter struct {
	graph  *model.FloatGraph
	perRun float64 // FLOPs counted per run
}

// newPeakMeter loads the chain (see peakGFLOPs). Close releases it.
func newPeakMeter(cfg model.SessionConfig, q onnx.Quant, layers, dim, rows int) (*peakMeter, error) {
	return newChainMeter(cfg, onnx.BuildQuantChain(layers, dim, q), layers, dim, rows)
}

// newHalfPeakMeter is newPeakMeter for the chain computed in a
// half-precision type (onnx.BuildHalfChain); it fails, naming the missing
// kernel, where ONNX Runtime has no such MatMul for this CPU.
func newHalfPeakMeter(cfg model.SessionConfig, elem onnxpb.TensorProto_DataType, layers, dim, rows int) (*peakMeter, error) {
	return newChainMeter(cfg, onnx.BuildHalfChain(layers, dim, elem), layers, dim, rows)
}

func newChainMeter(cfg model.SessionConfig, chain *onnx.Model, layers, dim, rows int) (*peakMeter, error) {
	dir, err := os.MkdirTemp("", "rerankd-peak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // scratch space; ORT has read the file
	if err := chain.Save(dir); err != nil {
		return nil, err
	}
	x := make([]float32, rows*dim)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	shape := []int64{int64(rows), int64(dim)}
	g, err := model.OpenFloatGraph(filepath.Join(dir, onnx.ModelFile), "x", "y", x, shape, shape, cfg)
	if err != nil {
		return nil, fmt.Errorf("peak: %w", err)
	}
	m := &peakMeter{graph: g, perRun: 2 * float64(layers) * float64(dim) * float64(dim) * float64(rows)}
	if err := g.Run(); err != nil { // warm-up: allocation, prepacking
		_ = m.Close()
		return nil, fmt.Errorf("peak: %w", err)
	}
	return m, nil
}

// Measure runs the chain for at least d and returns the GFLOP/s of its best
// window (d/8 each, at least 3): on a shared machine a long average
// measures the neighbours too, and a peak is what the hardware can do.
func (m *peakMeter) Measure(d time.Duration) (float64, error) {
	window := max(d/8, time.Millisecond)
	best, begin := 0.0, time.Now()
	for windows := 0; time.Since(begin) < d || windows < 3; windows++ {
		n, start := 0, time.Now()
		for time.Since(start) < window || n < 1 {
			if err := m.graph.Run(); err != nil {
				return 0, fmt.Errorf("peak: %w", err)
			}
			n++
		}
		best = max(best, m.perRun*float64(n)/time.Since(start).Seconds()/1e9)
	}
	return best, nil
}

// Close releases the chain's session and tensors.
func (m *peakMeter) Close() error { return m.graph.Close() }
