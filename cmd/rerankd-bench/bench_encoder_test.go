package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/onnx"
)

// TestBenchEncoder: bench on a tiny cross-encoder of each family (testmodel
// --arch with the tokenizer package's test files, converted with its int8
// variant) prints its JSON contract: every pair scored by each path, the
// served composition equal to the direct one, the token accounting
// consistent, and with --quant int8 the error against float32.
func TestBenchEncoder(t *testing.T) {
	for _, c := range []struct{ arch, tokenizer, quant string }{
		{"xlmr", "unigram/xlmr-current.json", "fp32"},
		{"bert", "wordpiece/bert-uncased.json", "int8"},
	} {
		if c.arch != "bert" && testing.Short() {
			continue // -short: one architecture
		}
		t.Run(c.arch+"/"+c.quant, func(t *testing.T) {
			tok := filepath.Join("..", "..", "tokenizer", "testdata", filepath.FromSlash(c.tokenizer))
			dir := convertedModel(t, []string{"--arch", c.arch, "--tokenizer", tok})
			self, err := os.Executable() // the test binary runs as the CLI (RERANKD_TEST_AS_CLI)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "2", "--candidates", "5", "--threads", "2",
				"--quant", c.quant, "--ready-starts", "1", "--memory-requests", "3", "--baseline-bin", self, "--json")
			if code != 0 {
				t.Fatalf("bench: exit %d: %s", code, errs)
			}
			var r encoderBenchResult
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("bench output %q: %v", out, err)
			}
			for _, check := range []struct {
				name string
				ok   bool
			}{
				{"model", r.Layers == 2 && r.Hidden > 0 && r.Params > 0 && r.Quant == c.quant && r.Pairs == 10},
				{"tokens", r.TokensPerPair > 3 && r.TokensPerPair <= float64(r.MaxLength) && r.PaddingRatio >= 0},
				{"rates", r.PairsPerS > 0 && r.BaselinePairsPerS > 0 && math.Abs(r.Speedup-r.PairsPerS/r.BaselinePairsPerS) < 1e-9 && r.SpeedupMedian > 0},
				{"efficiency", r.UsefulGFLOPs > 0 && r.PeakGFLOPs > 0 && math.Abs(r.Efficiency-r.UsefulGFLOPs/r.PeakGFLOPs) < 1e-9 &&
					r.EfficiencyMedian > 0 && r.BaselineEff > 0},
				{"served", r.ServedPairsPerS > 0 && r.ServedRatioMedian > 0 && r.ServedEngineCalls == r.EngineCalls && r.ServedMaxAbsLogitDiff <= 1e-5},
				{"quant error", (c.quant == "fp32") == (r.Error == nil) && (r.Error == nil ||
					r.Error.MaxAbsLogit > 0 && r.Error.MaxAbsLogit < 0.5 && r.Error.MeanAbsLogit <= r.Error.MaxAbsLogit &&
						r.Error.MaxAbsScore <= r.Error.MaxAbsLogit && r.Error.KendallTau > 0 && r.Error.KendallTau <= 1 && r.Error.RefLogitStd > 0)},
				{"memory", r.PeakRSSMB > 0 && r.WeightFilesMB > 0 && math.Abs(r.RSSOverMB-(r.PeakRSSMB-r.WeightFilesMB)) < 1e-9},
				{"quant peak", (c.quant == "fp32") == (r.QuantPeakGFLOPs == 0) && (r.QuantPeakGFLOPs == 0 || math.Abs(r.QuantEfficiency-r.UsefulGFLOPs/r.QuantPeakGFLOPs) < 1e-9)},
				{"ready", len(r.ReadyStartsS) == 1 && r.ReadyS > 0 && r.ReadyPeakMB > 0},
				{"served memory", servedMemoryOK(r.ServedMemory, []string{"fp32", "int8"}, 3)},
			} {
				if !check.ok {
					t.Errorf("%s wrong in %+v (error %+v)", check.name, r, r.Error)
				}
			}
			code, out, errs = runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "1", "--candidates", "3", "--ready-starts", "0", "--quant", c.quant,
				"--memory-requests", "1")
			if code != 0 || !strings.Contains(out, "cross-encoder") || !strings.Contains(out, "served (HTTP + scheduler, one client)") ||
				!strings.Contains(out, "served int8: peak RSS") ||
				strings.Contains(out, "vs float32") != (c.quant != "fp32") {
				t.Errorf("bench text output: exit %d, %q, %s", code, out, errs)
			}
			// --ort-profile: our path's trace, its matrix products counted.
			trace := filepath.Join(t.TempDir(), "trace")
			code, out, errs = runCLI(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "1", "--candidates", "3", "--ready-starts", "0",
				"--served=false", "--quant", c.quant, "--ort-profile", trace, "--memory-requests", "0", "--json")
			var pr encoderBenchResult
			if code != 0 || json.Unmarshal([]byte(out), &pr) != nil {
				t.Fatalf("bench --ort-profile: exit %d: %s %s", code, out, errs)
			}
			if p := pr.Profile; p == nil || !strings.HasPrefix(p.File, trace+"_") || p.Runs < 2 || p.MatrixShare <= 0 || p.MatrixGFLOPs <= 0 {
				t.Errorf("--ort-profile: %+v", pr.Profile)
			}
		})
	}
}

// servedMemoryOK checks bench's served memory: one entry per variant in
// order, each with its weights, both peaks (the later one no lower) and a
// rate, and the baseline build (the same binary here) measured beside it
// with the same logits.
func servedMemoryOK(ms []servedMemory, variants []string, requests int) bool {
	if len(ms) != len(variants) {
		return false
	}
	for i, m := range ms {
		b := m.Baseline
		if m.Quant != variants[i] || m.Requests != requests || m.WeightMB <= 0 || m.ReadyPeakMB <= 0 || m.AfterPeakMB < m.ReadyPeakMB ||
			math.Abs(m.OverWeightsMB-(m.AfterPeakMB-m.WeightMB)) > 1e-9 || m.PairsPerS <= 0 ||
			b == nil || b.ReadyPeakMB <= 0 || b.AfterPeakMB < b.ReadyPeakMB || b.WeightMB != m.WeightMB ||
			m.OursOverBaseline <= 0 || m.OursOverBaselineMedian <= 0 || m.MaxAbsLogitDiff == nil || *m.MaxAbsLogitDiff != 0 ||
			!stagesOK(m, requests) || !stagesOK(*b, requests) {
			return false
		}
	}
	return true
}

// stagesOK: ready, after the first request, after all of them; the peaks
// agree with the summary's, the resident set is its anonymous and
// file-backed parts, and the file-backed part holds at least the binary's
// and the ONNX Runtime library's pages (a tiny model's weights may not be
// mapped).
func stagesOK(m servedMemory, requests int) bool {
	want := []string{"ready", "after 1 request", fmt.Sprintf("after %d requests", requests)}
	if len(m.Stages) != len(want) || m.Stages[0].PeakMB != m.ReadyPeakMB || m.Stages[2].PeakMB != m.AfterPeakMB {
		return false
	}
	for i, st := range m.Stages {
		if st.Stage != want[i] || st.RSSMB <= 0 || st.PeakMB < st.RSSMB || math.Abs(st.AnonMB+st.FileMB-st.RSSMB) > 1 ||
			st.BinaryMB <= 0 || st.RuntimeMB <= 0 || st.BinaryMB+st.RuntimeMB+st.ModelMB+st.OtherFileMB > st.FileMB+1 {
			return false
		}
	}
	return true
}

// TestBenchEncoderCompare: convert --encoder-fusion writes the fused graph
// (its metadata names the set), and bench --compare times it beside the
// standard-op folder of the same checkpoint: every pair scored by both,
// the logits within the fusions' 1e-4 tolerance, the ratio consistent
// with the two pairs/s, each folder's form named.
func TestBenchEncoderCompare(t *testing.T) {
	ckpt := []string{"--arch", "bert", "--tokenizer", filepath.Join("..", "..", "tokenizer", "testdata", "wordpiece", "bert-uncased.json")}
	plain := convertedModel(t, ckpt, "--encoder-fusion", "none", "--quant", "none")
	fused := convertedModel(t, ckpt, "--encoder-fusion", "all", "--quant", "none")
	meta, err := onnx.ReadMeta(filepath.Join(fused, onnx.ModelFile))
	if err != nil || meta[onnx.MetaEncoderFusion] != onnx.AllEncoderFusions.String() {
		t.Fatalf("fused folder's %s: %q (%v)", onnx.MetaEncoderFusion, meta[onnx.MetaEncoderFusion], err)
	}
	code, out, errs := runCLI(t, "bench", "--peak-time", smokePeak, "--model", plain, "--compare", fused, "--requests", "3", "--candidates", "4", "--threads", "2",
		"--ready-starts", "0", "--served=false", "--memory-requests", "0", "--json")
	if code != 0 {
		t.Fatalf("bench --compare: exit %d: %s", code, errs)
	}
	var r encoderBenchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench output %q: %v", out, err)
	}
	c := r.Compare
	if c == nil || c.Dir != fused || c.EncoderFusion != onnx.AllEncoderFusions.String() || c.OursFusion != "none" ||
		c.PairsPerS <= 0 || math.Abs(c.Ratio-r.PairsPerS/c.PairsPerS) > 1e-9 || c.RatioMedian <= 0 || c.MaxAbsLogitDiff > 1e-4 {
		t.Errorf("compare: %+v (ours %.3f pairs/s)", c, r.PairsPerS)
	}
}
