package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// RunGuarded calls run (an in-process CLI: exit code from what it wrote to
// stdout and stderr) and turns a panic or a run past timeout into a test
// failure naming args: bad input must end in a message and an exit code,
// never a crash or a hang.
func RunGuarded(tb testing.TB, args []string, timeout time.Duration, run func(stdout, stderr *bytes.Buffer) int) (code int, stdout, stderr string) {
	tb.Helper()
	type result struct {
		code     int
		out, err string
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		defer func() {
			if p := recover(); p != nil {
				done <- result{panicked: p, stack: debug.Stack(), err: errb.String()}
			}
		}()
		c := run(&out, &errb)
		done <- result{code: c, out: out.String(), err: errb.String()}
	}()
	select {
	case r := <-done:
		if r.panicked != nil {
			tb.Fatalf("%q: panic: %v\nstderr: %s\n%s", args, r.panicked, r.err, r.stack)
		}
		return r.code, r.out, r.err
	case <-time.After(timeout):
		tb.Fatalf("%q still running after %s", args, timeout)
		return 0, "", ""
	}
}

// MiniTokenizer returns tokDir's Qwen3 tokenizer.json cut down to the 256
// byte-level tokens, "yes" (256), "no" (257) and the added tokens after
// them, with no merges: the same pipeline, loaded in milliseconds, for
// tests that need a valid tokenizer but not the real vocabulary.
func MiniTokenizer(tb testing.TB, tokDir string) []byte {
	tb.Helper()
	src := filepath.Join(tokDir, "tokenizer.json")
	Require(tb, src)
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		tb.Fatal(err)
	}
	m := f["model"].(map[string]any)
	vocab := map[string]any{}
	for k, v := range m["vocab"].(map[string]any) {
		if v.(float64) < 256 {
			vocab[k] = v
		}
	}
	vocab["yes"], vocab["no"] = 256, 257
	m["vocab"], m["merges"] = vocab, []any{}
	for i, a := range f["added_tokens"].([]any) {
		a.(map[string]any)["id"] = 258 + i
	}
	out, err := json.Marshal(f)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
