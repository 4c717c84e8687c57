package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/rerankd-bench/internal/ortprof"
)

// profileResult is `rerankd-bench bench --ort-profile`'s summary of our path's
// trace: where its time went, and how fast its matrix products ran
// against the MatMul chain's peak measured beside the requests. The
// efficiency bench reports is at most about MatrixShare x
// MatrixEfficiency: the products' own speed, diluted by every other op.
type profileResult struct {
	File string `json:"file"`
	ortprof.Summary
	// MatrixEfficiency is the products' GFLOP/s over the median of the
	// peaks measured beside each request (the quantised chain's for a
	// quantised path).
	MatrixEfficiency float64 `json:"matrix_efficiency"`
}

// errNoTrace: profiling was asked for but no trace appeared.
var errNoTrace = errors.New("no ONNX Runtime trace")

// readProfile summarises the newest PREFIX_*.json written since start,
// the trace ONNX Runtime writes when the profiled session closes.
func readProfile(prefix string, since time.Time, peak float64) (*profileResult, error) {
	paths, err := filepath.Glob(prefix + "_*.json")
	if err != nil {
		return nil, fmt.Errorf("--ort-profile %s: %w", prefix, err)
	}
	newest, at := "", since.Add(-time.Second) // file times can be coarser than the clock
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(at) {
			newest, at = p, fi.ModTime()
		}
	}
	if newest == "" {
		return nil, fmt.Errorf("%w at %s_*.json written since the bench started", errNoTrace, prefix)
	}
	s, err := ortprof.ReadFile(newest)
	if err != nil {
		return nil, err
	}
	r := &profileResult{File: newest, Summary: s}
	if peak > 0 {
		r.MatrixEfficiency = s.MatrixGFLOPs / peak
	}
	return r, nil
}

// printProfile writes p as two lines: the matrix products against the
// peak, and the longest op types.
func printProfile(w io.Writer, p *profileResult) error {
	var top []string
	for _, o := range p.Top(6) {
		top = append(top, fmt.Sprintf("%s %.1f%% (%.0f ms)", o.Type, 100*o.Share, 1e3*o.Seconds))
	}
	_, err := fmt.Fprintf(w, "ONNX Runtime trace of our path (%d runs, %.2f s each, %s): matrix products %.1f%% of kernel time at %.1f GFLOP/s, %.2f of the peak beside the requests\n"+
		"  longest op types per run: %s\n",
		p.Runs, p.RunSeconds, p.File, 100*p.MatrixShare, p.MatrixGFLOPs, p.MatrixEfficiency, strings.Join(top, ", "))
	return err
}
