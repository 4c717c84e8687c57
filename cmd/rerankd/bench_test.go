package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model/onnx"
)

// TestBenchTiny: bench on a tiny model prints the JSON contract, uses the
// shared-prefix graph testmodel writes, and counts each request's prefix
// once; with --no-shared-prefix the folder runs the plain path.
func TestBenchTiny(t *testing.T) {
	for _, noShared := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "tiny")
		args := []string{"testmodel", "--out", dir, "--seed", "5"}
		if noShared {
			args = append(args, "--no-shared-prefix")
		}
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("testmodel: %s", errs)
		}
		if _, err := os.Stat(filepath.Join(dir, onnx.SharedPrefixFile)); (err == nil) == noShared {
			t.Fatalf("--no-shared-prefix=%v: %s present: %v", noShared, onnx.SharedPrefixFile, err == nil)
		}
		code, out, errs := runCLI(t, "bench", "--model", dir, "--requests", "2", "--candidates", "4", "--threads", "2", "--json")
		if code != 0 {
			t.Fatalf("bench: exit %d: %s", code, errs)
		}
		var r benchResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("bench output %q: %v", out, err)
		}
		checks := []struct {
			name string
			ok   bool
		}{
			{"pairs", r.Pairs == 8},
			{"shared_prefix", r.SharedPrefix == !noShared},
			{"score error", r.MaxAbsScoreError <= 1e-5 && r.BaselineScoreError <= 1e-5},
			{"rates", r.PairsPerS > 0 && r.BaselinePairsPerS > 0 && r.UncachedPairsPerS > 0 && r.Speedup > 0 && r.PeakGFLOPs > 0},
			{"prefix", r.MeanPrefixTokens > 20 && r.MeanPrefixTokens < r.MeanTokensPerPair},
			{"computed per useful", (noShared || r.ComputedPerUseful < 1.0001) && r.ComputedPerUsefulUncached > 1},
			{"useful flops", r.UsefulGFLOPs > 0 && r.Efficiency > 0},
		}
		for _, c := range checks {
			if !c.ok {
				t.Errorf("no-shared-prefix=%v: %s wrong in %+v", noShared, c.name, r)
			}
		}
	}
}
