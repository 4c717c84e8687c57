package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/cmd/rerankd-bench/internal/ortprof"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// smokePeak is the bench tests' --peak-time: they check that the report
// carries a peak and the efficiencies derived from it, not its value, so
// the MatMul chain runs for a tenth of a second (a fiftieth beside each
// request) instead of seconds at full load.
const smokePeak = "100ms"

// TestBenchTiny: bench on a tiny model prints the JSON contract, uses the
// shared-prefix graph testmodel writes, and counts each request's prefix
// once; with --no-shared-prefix the folder runs the plain path; with
// --quant int8 our path runs the int8 variant and reports its error
// against the float32 reference.
func TestBenchTiny(t *testing.T) {
	for i, c := range []struct {
		noShared bool
		quant    string
	}{{false, "fp32"}, {true, "fp32"}, {false, "int8"}} {
		if i > 0 && testing.Short() {
			break // -short: the shared-prefix float32 case only
		}
		noShared := c.noShared
		dir := writeTiny(t, "int8")
		if noShared {
			dir = writeTiny(t, "none", "--no-shared-prefix")
		}
		if _, err := os.Stat(filepath.Join(dir, onnx.SharedPrefixFile)); (err == nil) == noShared {
			t.Fatalf("--no-shared-prefix=%v: %s present: %v", noShared, onnx.SharedPrefixFile, err == nil)
		}
		if _, err := os.Stat(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, onnx.QuantInt8))); (err == nil) == noShared {
			t.Fatalf("--quant none=%v: int8 variant present: %v", noShared, err == nil)
		}
		// Two timed starts (a median of two) once; none in the other cases
		// (--ready-starts 0 skips them): each start is three fresh
		// processes, and what they time does not depend on the path bench
		// measures (TestStartBenchTiny starts int8 weights).
		starts := 0
		if i == 0 {
			starts = 2
		}
		trace := filepath.Join(t.TempDir(), "trace")
		code, out, errs := runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "2", "--candidates", "4", "--threads", "2", "--quant", c.quant,
			"--ready-starts", strconv.Itoa(starts), "--ort-profile", trace, "--json")
		if code != 0 {
			t.Fatalf("bench: exit %d: %s", code, errs)
		}
		// The bar's lines start with its label; the served model's
		// random-weights warning names "rerankd-bench testmodel" mid-line.
		if strings.Contains(errs, "\r") || progressLine.MatchString(errs) {
			t.Errorf("progress bar written to a stderr that is not a terminal: %q", errs)
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
			{"fused_attention", r.FusedAttention == !noShared}, // testmodel writes the CPU attention form
			{"quant", r.Quant == c.quant && (c.quant == "fp32") == (r.QuantPeakGFLOPs == 0)},
			{"score error", (c.quant != "fp32" || r.MaxAbsScoreError <= 1e-5 && r.BaselineScoreError <= 1e-5) &&
				(c.quant == "fp32" || r.MaxAbsScoreError > 1e-6 && r.MaxAbsScoreError < 0.05 && r.MeanAbsScoreError <= r.MaxAbsScoreError)},
			{"logit error", r.MeanAbsLogitError <= r.MaxAbsLogitError && (c.quant == "fp32") == (r.MaxAbsLogitError < 1e-4) &&
				r.ScoreError != nil && r.ScoreError.MaxAbsLogit == r.MaxAbsLogitError && r.ScoreError.MeanAbsLogit == r.MeanAbsLogitError &&
				r.ScoreError.KendallTau == r.KendallTau && r.ScoreError.Top5Agree == r.Top5Agree},
			{"ranking", r.RefLogitStd > 0 && r.KendallTau > 0.5 && r.KendallTau <= 1 && (c.quant != "fp32" || r.KendallTau > 0.99 && r.Top5Agree == 1)},
			{"speedup bound", r.SpeedupBound > 1 && (noShared || r.SpeedupBound > r.MeanTokensPerPair/(r.MeanTokensPerPair-r.MeanPrefixTokens+r.MeanPrefixTokens/4)-1e-9)},
			{"rates", r.PairsPerS > 0 && r.BaselinePairsPerS > 0 && r.UncachedPairsPerS > 0 && r.Speedup > 0 && r.PeakGFLOPs > 0},
			{"prefix", r.MeanPrefixTokens > 20 && r.MeanPrefixTokens < r.MeanTokensPerPair},
			{"computed per useful", (noShared || r.ComputedPerUseful < 1.0001) && r.ComputedPerUsefulUncached > 1},
			{"useful flops", r.UsefulGFLOPs > 0 && r.Efficiency > 0},
			// The warm-up request (another query) primes the system prompt
			// and instruction; the shared-prefix graph skips the last
			// layer's work for all but the last tokens.
			{"prefix cache", r.PrefixCache == !noShared && (noShared || r.MeanPrefixReused > 20 && r.MeanPrefixReused < r.MeanPrefixTokens &&
				r.PrefixCacheGain > 0 && r.PrefixCacheGainMedian > 0 && r.NoCachePairsPerS > 0)},
			{"computed flops", r.ComputedGFLOPs > 0 && r.ComputedGFLOPs <= r.UsefulGFLOPs && (!noShared || r.ComputedGFLOPs == r.UsefulGFLOPs) &&
				math.Abs(r.EfficiencyComputed/r.Efficiency-r.ComputedGFLOPs/r.UsefulGFLOPs) < 1e-9},
			{"median speedup", r.SpeedupMedian > 0},
			// The served composition scores the same pairs as the direct
			// path (its own engine, the same cache history) in the same
			// calls: one per request on the packed shared-prefix graph; on
			// the padded plain graph the pad ratio may split a request, the
			// same way in both.
			{"served", r.ServedPairsPerS > 0 && math.Abs(r.ServedRatio-r.ServedPairsPerS/r.PairsPerS) < 1e-9 && r.ServedRatioMedian > 0 &&
				r.ServedMaxAbsLogitDiff <= 1e-4 && r.EngineCallsPerRequest == r.DirectEngineCallsPerRequest &&
				(noShared && r.EngineCallsPerRequest >= 1 || r.EngineCallsPerRequest == 1)},
			{"ready", len(r.ReadyStartsS) == starts && len(r.ReadyCachedStartsS) == starts && (starts == 0 &&
				r.ReadyS == 0 && r.ReadyPeakRSSMB == 0 && r.ReadyCachedS == 0 && r.ReadyCachedPeakRSSMB == 0 ||
				r.ReadyS > 0 && r.ReadyS < 60 && r.ReadyPeakRSSMB > 0 && r.ReadyCachedS > 0 && r.ReadyCachedPeakRSSMB > 0)},
			{"score_error", r.ScoreError != nil && r.ScoreError.Variant == c.quant && r.ScoreError.MaxAbs == r.MaxAbsScoreError},
			{"per-request efficiency", r.EffComputedMedian > 0 && (c.quant == "fp32") == (r.QuantEffComputedMedian == 0)},
			// The baseline computes every pair's whole prompt: more FLOPs
			// than ours whenever pairs share a prefix; the ceiling is that
			// ratio over the baseline's efficiency.
			{"ceiling", (c.quant == "fp32") == (r.BaselineEfficiency > 0) && (c.quant != "fp32" ||
				r.SpeedupBoundComputed > 1 && math.Abs(r.SpeedupCeiling-r.SpeedupBoundComputed/r.BaselineEfficiency) < 1e-9)},
		}
		// --ort-profile: our path's trace, every run of it (a warm-up and
		// each request, once more with the cache bypassed), its matrix
		// products counted.
		p := r.Profile
		matrixOp := func(o ortprof.Op) bool { return o.Type == "Gemm" && o.GFLOP > 0 }
		if c.quant == "int8" { // MatMulInteger or ONNX Runtime's fusions of it
			matrixOp = func(o ortprof.Op) bool {
				return (strings.Contains(o.Type, "Integer") || o.Type == "DynamicQuantizeMatMul") && o.GFLOP > 0
			}
		}
		checks = append(checks, struct {
			name string
			ok   bool
		}{"ort_profile", p != nil && strings.HasPrefix(p.File, trace+"_") && p.Runs >= r.Requests+1 && p.RunSeconds > 0 &&
			p.MatrixShare > 0 && p.MatrixShare < 1 && p.MatrixGFLOPs > 0 && p.MatrixEfficiency > 0 &&
			slices.ContainsFunc(p.Ops, matrixOp) &&
			// the attention form's Attention nodes count as products
			(noShared || slices.ContainsFunc(p.Ops, func(o ortprof.Op) bool { return o.Type == "Attention" && o.GFLOP > 0 }))})
		for _, check := range checks {
			if !check.ok {
				t.Errorf("%+v: %s wrong in %+v", c, check.name, r)
			}
		}
		if c.quant == "fp32" && !noShared { // the text form names the same figures
			code, out, errs := runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "1", "--candidates", "3", "--ready-starts", "1",
				"--ort-profile", filepath.Join(t.TempDir(), "trace"))
			if code != 0 || !strings.Contains(out, "fp32 weights: pairs/s") || !strings.Contains(out, "every FLOP of ours at the peak would give") ||
				!strings.Contains(out, "ONNX Runtime trace of our path") || !strings.Contains(out, "longest op types per run: ") ||
				!strings.Contains(out, "served (HTTP + scheduler, one client)") || !strings.Contains(out, "start to ready: median") {
				t.Errorf("bench text output: exit %d, %q, %s", code, out, errs)
			}
		}
	}
}

// TestBenchServed: bench's served composition (an HTTP server, the
// scheduler and an engine on goroutines of their own, timed beside the
// direct path) scores what the direct path scores, one engine call per
// request. It is the bench test the race tier runs (scripts/test_tiers.txt);
// TestBenchTiny checks the rest of the report without the race detector.
func TestBenchServed(t *testing.T) {
	dir := writeTiny(t, "none")
	code, out, errs := runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "2", "--candidates", "3", "--threads", "2",
		"--ready-starts", "0", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench output %q: %v", out, err)
	}
	if r.Pairs != 6 || !(r.ServedPairsPerS > 0) || r.ServedMaxAbsLogitDiff > 1e-4 || r.EngineCallsPerRequest != 1 ||
		r.DirectEngineCallsPerRequest != 1 || math.Abs(r.ServedRatio-r.ServedPairsPerS/r.PairsPerS) > 1e-9 {
		t.Errorf("served composition wrong in %+v", r)
	}
}

func TestMedianRatio(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, c := range []struct {
		num, den []time.Duration
		want     float64
	}{
		{ms(10, 20, 90), ms(10, 10, 10), 2}, // one slow stretch does not move it
		{ms(10, 40), ms(10, 10), 2.5},       // even count: mean of the middle two
		{ms(30), ms(10, 10), 3},             // unequal lengths: the common part
		{nil, ms(10), 0},
	} {
		if got := medianRatio(c.num, c.den); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("medianRatio(%v, %v) = %g, want %g", c.num, c.den, got, c.want)
		}
	}
}

func TestRankAgreement(t *testing.T) {
	sc := func(v ...float64) []rerank.Score {
		out := make([]rerank.Score, len(v))
		for i, x := range v {
			out[i].Score = x
		}
		return out
	}
	base := sc(0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)
	cases := []struct {
		name      string
		other     []rerank.Score
		tau, top5 float64
	}{
		{"identical", base, 1, 1},
		{"reversed", sc(0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), -1, 0},
		{"bottom pair swapped", sc(0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.4), 1 - 2.0/21, 1},
		{"5th and 6th swapped", sc(0.9, 0.8, 0.7, 0.6, 0.4, 0.5, 0.3), 1 - 2.0/21, 0},
	}
	for _, c := range cases {
		tau, top5 := rankAgreement(c.other, base, len(base))
		if math.Abs(tau-c.tau) > 1e-12 || top5 != c.top5 {
			t.Errorf("%s: tau %v top5 %v, want %v %v", c.name, tau, top5, c.tau, c.top5)
		}
	}
	// Two groups: one identical, one reversed.
	tau, top5 := rankAgreement(append(slices.Clone(base), cases[1].other...), append(slices.Clone(base), base...), len(base))
	if math.Abs(tau) > 1e-12 || top5 != 0.5 {
		t.Errorf("two groups: tau %v top5 %v, want 0 0.5", tau, top5)
	}
}

// progressLine matches a line of the bench's progress bar.
var progressLine = regexp.MustCompile(`(?m)^\s*bench\s`)
