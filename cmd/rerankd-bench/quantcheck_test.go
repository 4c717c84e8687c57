package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/graphflags"
	"github.com/rerankd/rerankd/model/onnx"
)

// writeTiny returns a tiny testmodel folder with the given --quant list
// (shared, read-only: testModel), its weights in one external data file
// as a full-size model's are: every start and session of the lab's tests
// then reads them from there instead of parsing each graph's inline copy.
func writeTiny(t *testing.T, quants string, more ...string) string {
	t.Helper()
	return testModel(t, append([]string{"--seed", "5", "--external", "--quant", quants}, more...)...)
}

func writeTexts(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestQuantCheckTiny: quant-check reports every variant of the folder
// against float32 on generated requests and on a --texts file: errors
// that are real (non-zero, mean below max, within the tiny model's
// bounds), rankings compared per request, and speed ratios against the
// base variant (itself exactly 1).
func TestQuantCheckTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every quantised variant, int8-smooth's calibration included")
	}
	dir := writeTiny(t, graphflags.QuantList(onnx.Quants()))
	texts := writeTexts(t, "texts.jsonl", `{"query": "when did Caroline paint the lake?", "documents": ["Caroline: we painted a sunset over the lake.", "Jon: adopted a cat.", "Gina: camping in July."]}

{"query": "who volunteers?", "documents": ["Priya: I started volunteering at the food bank.", "Tomasz: my therapist said it would help."], "instruction": "Find the memory that answers the question"}
`)
	for _, c := range []struct {
		name  string
		args  []string
		pairs int
		reqs  int
	}{
		{"generated", []string{"--requests", "2", "--candidates", "6"}, 12, 2},
		{"texts", []string{"--texts", texts}, 5, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"quant-check", "--model", dir, "--threads", "2", "--json"}, c.args...)
			code, out, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var r quantCheckResult
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if r.Pairs != c.pairs || r.Requests != c.reqs || r.SpeedBase != "int8" || r.FP32PairsPerS <= 0 || r.RefLogitStd <= 0 {
				t.Errorf("header %+v", r)
			}
			if len(r.Variants) != len(onnx.Quants()) {
				t.Fatalf("variants %+v, want one per %v", r.Variants, onnx.Quants())
			}
			for i, v := range r.Variants {
				if v.Variant != onnx.Quants()[i].String() {
					t.Errorf("variant %d is %s", i, v.Variant)
				}
				// Bounds: the tiny model's score tolerance (model/quant_test.go)
				// and the logit change it allows.
				ok := v.MaxAbsLogit > 1e-5 && v.MaxAbsLogit < 0.5 && v.MeanAbsLogit <= v.MaxAbsLogit &&
					v.MaxAbsScore > 1e-6 && v.MaxAbsScore < 0.05 && v.MeanAbsScore <= v.MaxAbsScore &&
					v.KendallTau > 0.5 && v.KendallTau <= 1 && v.Top5Agree >= 0 && v.Top5Agree <= 1 && v.PairsPerS > 0
				if !ok {
					t.Errorf("%+v", v)
				}
				if v.Variant == "int8" && (v.SpeedRatio != 1 || v.SpeedRatioMedian != 1) {
					t.Errorf("the base's own ratio: %+v", v)
				}
			}
		})
	}
	// The table form names every variant and column, and
	// --per-projection every projection kind with its error.
	code, out, errs := runCLI(t, "quant-check", "--model", dir, "--quant", "int8-block32", "--rounds", "0", "--requests", "1", "--candidates", "3",
		"--per-projection", "2")
	if code != 0 {
		t.Fatalf("table: exit %d: %s", code, errs)
	}
	for _, want := range []string{"max|dlogit|", "mean|dscore|", "tau", "top5", "int8-block32", "self_attn.q_proj", "mlp.down_proj", "block32 mean"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestQuantCheckErrors: bad invocations and bad --texts files exit
// non-zero with a message naming the problem (2: usage, 1: failure).
func TestQuantCheckErrors(t *testing.T) {
	only := writeTiny(t, "int8")
	none := writeTiny(t, "none")
	texts := func(s string) string { return writeTexts(t, "t.jsonl", s) }
	tmp := t.TempDir()
	for _, c := range []cliCase{
		{name: "no model", args: []string{"quant-check"}, code: 2, want: []string{"--model required"}},
		{name: "every usage problem at once", args: []string{"quant-check", "--candidates", "1", "--rounds", "-1"}, code: 2,
			want: []string{"--model required", "--candidates must be >= 2", "--rounds, --threads and --per-projection must be >= 0"}},
		{name: "model missing", args: []string{"quant-check", "--model", filepath.Join(tmp, "nomodel")}, code: 1, want: []string{"nomodel"}},
		{name: "bad speed base", args: []string{"quant-check", "--model", only, "--speed-base", "int3"}, code: 2, want: []string{"--speed-base", "int3"}},
		{name: "unknown variant", args: []string{"quant-check", "--model", only, "--quant", "int3,fp32"}, code: 2,
			want: []string{"int3", "fp32 is the reference"}},
		{name: "variant absent", args: []string{"quant-check", "--model", only, "--quant", "int8-block32"}, code: 2,
			want: []string{"model.int8-block32.onnx", "--quant int8-block32"}},
		{name: "no variants", args: []string{"quant-check", "--model", none}, code: 1, want: []string{"no quantised variant", "convert --quant"}},
		{name: "speed base not checked", args: []string{"quant-check", "--model", only, "--speed-base", "int8-mixed"}, code: 2,
			want: []string{"--speed-base int8-mixed is not among"}},
		{name: "texts missing", args: []string{"quant-check", "--model", only, "--texts", filepath.Join(tmp, "none.jsonl")}, code: 1,
			want: []string{"--texts", "none.jsonl"}},
		{name: "texts empty", args: []string{"quant-check", "--model", only, "--texts", texts("\n\n")}, code: 1, want: []string{"no requests"}},
		{name: "texts bad lines", args: []string{"quant-check", "--model", only, "--texts", texts(
			`{"query": "q", "documents": ["a", "b"]}` + "\n" + `{"query": "q", "docs": ["a"]}` + "\n" + `not json` + "\n" +
				`{"query": " ", "documents": [""]}` + "\n" + `{"query": "q", "documents": ["a", "b"]} {}`)}, code: 1,
			want: []string{"line 2", "unknown field", "line 3", "line 4: empty query", "line 4: 1 documents", "line 4: document 0 is empty",
				"line 5: more than one JSON value"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %s", code, c.code, errs)
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}
