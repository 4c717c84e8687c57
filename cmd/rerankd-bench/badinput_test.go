package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
)

// TestBadInputLab: the lab's commands refuse bad command lines and files
// with the documented exit status (2: usage, 1: failure) and a message
// naming the problem, without a panic or a hang (the lab's part of the
// catalogue cmd/rerankd's TestBadInputCLI runs; docs/bad-input.md).
func TestBadInputLab(t *testing.T) {
	ortLib := testenv.ORTLib() // before RERANKD_CACHE moves
	t.Setenv("RERANKD_DATA", t.TempDir())
	t.Setenv("RERANKD_CACHE", t.TempDir())
	t.Setenv("ORT_LIB", ortLib)
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "adir") // a folder without model files
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	garbageTok := filepath.Join(tmp, "garbage-tokenizer")
	if err := os.Mkdir(garbageTok, 0o755); err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte{0xff, 0x13, 0x00, 0x7b}, 1024)
	for _, f := range []string{"model.onnx", "tokenizer.json"} {
		if err := os.WriteFile(filepath.Join(garbageTok, f), garbage, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{name: "no command", args: nil, code: 2, want: []string{"usage: rerankd-bench"}},
		{name: "unknown command", args: []string{"serve"}, code: 2, want: []string{`unknown command "serve"`}},
		{name: "loadtest: negative requests", args: []string{"loadtest", "--requests", "-5"}, code: 2, want: []string{"--requests must be >= 0"}},
		{name: "loadtest: negative overload requests", args: []string{"loadtest", "--overload-requests", "-1"}, code: 2, want: []string{"--overload-requests >= 1"}},
		{name: "loadtest: huge workers", args: []string{"loadtest", "--workers", "100000"}, code: 2, want: []string{"--workers at most 1024"}},
		{name: "loadtest: negative soak", args: []string{"loadtest", "--soak", "-5s"}, code: 2, want: []string{"--soak, --ramp and --sample must be >= 0"}},
		{name: "loadtest: negative ramp", args: []string{"loadtest", "--soak", "1s", "--ramp", "-1s"}, code: 2, want: []string{"--soak, --ramp and --sample must be >= 0"}},
		{name: "loadtest: negative clients", args: []string{"loadtest", "--clients", "-1"}, code: 2, want: []string{"--clients -1: want 1..100000"}},
		{name: "loadtest: negative max RSS", args: []string{"loadtest", "--max-rss-mb", "-1"}, code: 2, want: []string{"--max-rss-mb"}},
		{name: "tune: huge cores", args: []string{"tune", "--model", "x", "--cores", "100000"}, code: 2, want: []string{"--cores at most 1024"}},
		{name: "loadtest: zero workers", args: []string{"loadtest", "--workers", "0"}, code: 2, want: []string{"--workers must be >= 1"}},
		{name: "bench: negative prefix cache", args: []string{"bench", "--model", tmp, "--prefix-cache-mb", "-1"}, code: 2, want: []string{"--prefix-cache-mb, --ready-starts and --memory-requests >= 0"}},
		{name: "bench: trace folder missing", args: []string{"bench", "--model", tmp, "--ort-profile", filepath.Join(tmp, "nofolder", "p")}, code: 2, want: []string{"--ort-profile", "nofolder", "does not exist"}},
		{name: "bench: negative ready starts", args: []string{"bench", "--model", tmp, "--ready-starts", "-1"}, code: 2, want: []string{"--ready-starts and --memory-requests >= 0"}},
		{name: "loadtest: negative prefix cache", args: []string{"loadtest", "--prefix-cache-mb", "-3"}, code: 2, want: []string{"--prefix-cache-mb >= 0"}},
		{name: "loadtest: quant unknown", args: []string{"loadtest", "--quant", "bf16"}, code: 2, want: []string{"--quant", "bf16"}},
		{name: "bench: compare on a decoder folder", args: []string{"bench", "--model", empty, "--compare", empty}, code: 2, want: []string{"--compare", "not a cross-encoder folder"}},
		{name: "bench: baseline on a decoder folder", args: []string{"bench", "--model", empty, "--baseline-bin", os.Args[0]}, code: 2, want: []string{"--baseline-bin", "not a cross-encoder folder"}},
		{name: "bench: serve flag without dashes", args: []string{"bench", "--model", tmp, "--serve-flag", "batch-tokens=512"}, code: 2, want: []string{"-serve-flag", "want --name or --name=value"}},
		{name: "bench: serve flag on a decoder folder", args: []string{"bench", "--model", empty, "--serve-flag=--batch-tokens=512"}, code: 2, want: []string{"--serve-flag", "not a cross-encoder folder"}},
		{name: "bench: negative memory requests", args: []string{"bench", "--model", tmp, "--memory-requests", "-1"}, code: 2, want: []string{"--memory-requests >= 0"}},
		{name: "bench: zero peak time", args: []string{"bench", "--model", tmp, "--peak-time", "0s"}, code: 2, want: []string{"--peak-time > 0"}},
		{name: "bench: baseline model without binary", args: []string{"bench", "--model", tmp, "--baseline-model", tmp}, code: 2, want: []string{"--baseline-model needs --baseline-bin"}},
		{name: "bench: baseline binary missing", args: []string{"bench", "--model", tmp, "--baseline-bin", filepath.Join(tmp, "nobin")}, code: 2, want: []string{"--baseline-bin", "nobin", "not a file"}},
		{name: "bench: baseline without memory requests", args: []string{"bench", "--model", tmp, "--baseline-bin", os.Args[0], "--memory-requests", "0"}, code: 2, want: []string{"--memory-requests must be >= 1"}},
		{name: "loadtest: concurrency garbage", args: []string{"loadtest", "--concurrency", "1,x"}, code: 2, want: []string{"--concurrency"}},
		{name: "loadtest: concurrency zero", args: []string{"loadtest", "--concurrency", "0"}, code: 2, want: []string{"--concurrency"}},
		{name: "loadtest: concurrency 2^63", args: []string{"loadtest", "--concurrency", "9223372036854775808"}, code: 2, want: []string{"--concurrency"}},
		{name: "loadtest: candidates negative", args: []string{"loadtest", "--candidates", "-3"}, code: 2, want: []string{"--candidates"}},
		{name: "loadtest: model missing", args: []string{"loadtest", "--model", filepath.Join(tmp, "nomodel")}, code: 1, want: []string{"nomodel"}},
		{name: "loadtest: model garbage", args: []string{"loadtest", "--model", garbageTok}, code: 1, want: []string{"tokenizer"}},
		{name: "bench: no model", args: []string{"bench"}, code: 2, want: []string{"--model required"}},
		{name: "bench: requests zero", args: []string{"bench", "--model", empty, "--requests", "0"}, code: 2, want: []string{"--requests"}},
		{name: "bench: model missing", args: []string{"bench", "--model", filepath.Join(tmp, "nomodel")}, code: 1, want: []string{"nomodel"}},
		{name: "bench: model directory without files", args: []string{"bench", "--model", empty}, code: 1, want: []string{"model.onnx"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := testenv.RunGuarded(t, c.args, 60*time.Second, func(out, errb *bytes.Buffer) int {
				return run(c.args, strings.NewReader(""), out, errb)
			})
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
			if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
				t.Errorf("stderr looks like a crash: %q", errs)
			}
		})
	}
}
