package main

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/testmodel"
	"github.com/rerankd/rerankd/internal/msgcheck"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// cliCase is one bad invocation and the documented answer (docs/bad-input.md):
// exit status, and what stderr must say.
type cliCase struct {
	name  string
	args  []string
	stdin string
	code  int      // 1: failure, 2: usage; 0: documented as accepted
	want  []string // substrings of stderr
	// out is a substring stdout must hold (accepted cases), or "" for an
	// empty stdout on failure.
	out string
}

// runGuarded runs the CLI in-process and turns a panic or a hang into a test
// failure naming the case.
func runGuarded(t *testing.T, stdin string, args []string) (code int, stdout, stderr string) {
	t.Helper()
	return testenv.RunGuarded(t, args, 60*time.Second, func(out, errb *bytes.Buffer) int {
		p := program()
		if len(args) > 0 && args[0] == "testmodel" { // rerankd-bench's, making fixtures (runCLI)
			p = cli.Program{Name: "rerankd-bench", Commands: []cli.Command{{Name: "testmodel", Run: testmodel.Run}}}
		}
		return p.Run(args, strings.NewReader(stdin), out, errb)
	})
}

// miniTokenizer writes a small tokenizer.json with the Qwen3 pipeline, the
// 256 byte-level tokens, "yes"/"no" and the added tokens: it loads in
// milliseconds, so cases that need a valid tokenizer stay fast.
func miniTokenizer(t *testing.T, tokDir string) string {
	t.Helper()
	out := testenv.MiniTokenizer(t, tokDir)
	p := filepath.Join(t.TempDir(), "mini", "tokenizer.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostileFiles writes the bad files the cases point at.
type hostileFiles struct {
	dir, garbage, empty, zeros, badUTF8, deepJSON, truncJSON, loop, notDir string
	model                                                                  map[string]string // garbage model folders
}

func writeHostile(t *testing.T, tok string) hostileFiles {
	t.Helper()
	d := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 1))
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	w := func(name string, b []byte) string {
		p := filepath.Join(d, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	h := hostileFiles{dir: filepath.Join(d, "adir"), garbage: w("garbage.bin", garbage), empty: w("empty", nil),
		zeros: w("zeros", make([]byte, 1<<16)), badUTF8: w("bad.txt", []byte("caf\xe9 \xff\xfe\x00 x\n")),
		deepJSON: w("deep.json", []byte(strings.Repeat("[", 100_000))), truncJSON: w("trunc.json", []byte(`{"a": [1, 2`)),
		loop: filepath.Join(d, "loop"), notDir: filepath.Join(d, "garbage.bin", "sub", "file")}
	if err := os.Mkdir(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.loop, h.loop); err != nil {
		t.Fatal(err)
	}
	tokData, err := os.ReadFile(tok)
	if err != nil {
		t.Fatal(err)
	}
	// Model folders: every file the loaders read, broken one way at a time.
	h.model = map[string]string{}
	for name, files := range map[string]map[string][]byte{
		"garbage onnx":        {"model.onnx": garbage, "tokenizer.json": tokData},
		"empty onnx":          {"model.onnx": nil, "tokenizer.json": tokData},
		"zeros onnx":          {"model.onnx": make([]byte, 1<<16), "tokenizer.json": tokData},
		"protobuf huge field": {"model.onnx": []byte{0x3a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x01}, "tokenizer.json": tokData},
		"garbage tokenizer":   {"model.onnx": garbage, "tokenizer.json": garbage},
		"deep tokenizer":      {"model.onnx": garbage, "tokenizer.json": []byte(strings.Repeat("[", 100_000))},
		"garbage config":      {"model.onnx": garbage, "tokenizer.json": tokData, "config.json": garbage},
		"config wrong types":  {"model.onnx": garbage, "tokenizer.json": tokData, "config.json": []byte(`{"hidden_size":"big","num_hidden_layers":-1e400}`)},
		"onnx is a directory": {"model.onnx/x": nil, "tokenizer.json": tokData},
	} {
		dir := filepath.Join(d, "models", strings.ReplaceAll(name, " ", "_"))
		for f, b := range files {
			w(filepath.Join("models", filepath.Base(dir), f), b)
		}
		h.model[name] = dir
	}
	return h
}

// notFoundHub answers 404 to everything, so a repo id never reaches the network.
//
// testtiers: static server
func notFoundHub(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func rerankdCatalogue(t *testing.T, tokDir string) []cliCase {
	tok := miniTokenizer(t, tokDir)
	h := writeHostile(t, tok)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Close() })
	tmp := t.TempDir()
	bad := "\xff\xfe\x00bad"
	locked := filepath.Join(tmp, "locked.db")
	st, err := bolt.Open(locked, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// serve never gets past its flags and files here: each case must fail
	// before it listens (or fail to listen).
	srv := func(args ...string) []string {
		return append([]string{"serve", "--addr", "127.0.0.1:0", "--store", "none"}, args...)
	}
	cases := []cliCase{
		{name: "no command", args: nil, code: 2, want: []string{"usage: rerankd"}},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: []string{`unknown command "frobnicate"`}},
		{name: "invalid UTF-8 command", args: []string{bad}, code: 2, want: []string{`unknown command "\xff\xfe\x00bad"`}},
		{name: "flag as command", args: []string{"--model", "x"}, code: 2, want: []string{"unknown command"}},
		{name: "empty command", args: []string{""}, code: 2, want: []string{`unknown command ""`}},
		{name: "bench moved", args: []string{"bench", "--model", tmp}, code: 2, want: []string{"rerankd-bench bench"}},
		{name: "loadtest moved", args: []string{"loadtest"}, code: 2, want: []string{"rerankd-bench loadtest"}},
		{name: "quant-check moved", args: []string{"quant-check"}, code: 2, want: []string{"rerankd-bench quant-check"}},
		{name: "start-bench moved", args: []string{"start-bench"}, code: 2, want: []string{"rerankd-bench start-bench"}},
		{name: "tune moved", args: []string{"tune"}, code: 2, want: []string{"rerankd-bench tune"}},

		{name: "serve: unknown flag", args: srv("--nope"), code: 2, want: []string{"flag provided but not defined: -nope"}},
		{name: "serve: invalid UTF-8 flag name", args: srv("--" + bad), code: 2, want: []string{"flag provided but not defined"}},
		{name: "serve: int flag not a number", args: srv("--max-documents", "lots"), code: 2, want: []string{"-max-documents"}},
		{name: "serve: int flag 2^63", args: srv("--max-body-bytes", "9223372036854775808"), code: 2, want: []string{"value out of range"}},
		{name: "serve: int flag 1e400", args: srv("--max-body-bytes", "1e400"), code: 2, want: []string{"-max-body-bytes"}},
		{name: "serve: negative limits", args: srv("--max-documents", "-1", "--max-body-bytes", "-5", "--max-tokens-per-doc", "-1"), code: 2,
			want: []string{"max documents", "max body bytes", "max tokens per document"}},
		{name: "serve: duration garbage", args: srv("--request-timeout", "soon"), code: 2, want: []string{"-request-timeout"}},
		{name: "serve: negative duration", args: srv("--request-timeout", "-1s"), code: 2, want: []string{"request timeout"}},
		{name: "serve: log level invalid UTF-8", args: srv("--log-level", bad), code: 2, want: []string{"--log-level"}},
		{name: "serve: quant unknown", args: srv("--quant", "int4"), code: 2, want: []string{"--quant", "int4"}},
		{name: "serve: quant without a model", args: srv("--quant", "int8"), code: 2, want: []string{"--quant int8 needs --model"}},
		{name: "serve: negative prefix cache", args: srv("--prefix-cache-mb", "-1"), code: 2, want: []string{"--prefix-cache-mb -1"}},
		{name: "testmodel: graph fusion unknown", args: []string{"testmodel", "--out", filepath.Join(h.dir, "fused"), "--graph-fusion", "rotary+flash"}, code: 2, want: []string{"--graph-fusion", `unknown fusion "flash"`}},
		{name: "convert: encoder fusion unknown", args: []string{"convert", "--from", h.dir, "--out", filepath.Join(h.dir, "conv"), "--encoder-fusion", "skipnorm+rotary"}, code: 2, want: []string{"--encoder-fusion", `unknown encoder fusion "rotary"`}},
		{name: "testmodel: encoder fusion on a checkpoint", args: []string{"testmodel", "--arch", "bert", "--out", filepath.Join(h.dir, "ckpt"), "--encoder-fusion", "all"}, code: 2, want: []string{"--encoder-fusion", "pass it to rerankd convert"}},
		{name: "testmodel: encoder fusion on qwen3", args: []string{"testmodel", "--out", filepath.Join(h.dir, "q"), "--encoder-fusion", "all"}, code: 2, want: []string{"--encoder-fusion is for BERT / XLM-R graphs"}},
		{name: "convert: attention buckets 0", args: []string{"convert", "--from", h.dir, "--out", filepath.Join(h.dir, "conv"), "--attention-buckets", "0"}, code: 2, want: []string{"--attention-buckets 0: want 1..8"}},
		{name: "testmodel: attention form buckets 9", args: []string{"testmodel", "--out", filepath.Join(h.dir, "form"), "--attention-form-buckets", "9"}, code: 2, want: []string{"--attention-form-buckets 9: want 1..8"}},
		{name: "serve: address in use", args: []string{"serve", "--store", "none", "--addr", busy.Addr().String()}, code: 1, want: []string{"listen", "address already in use"}},
		{name: "serve: address garbage", args: []string{"serve", "--store", "none", "--addr", "not an address"}, code: 1, want: []string{"listen not an address"}},
		{name: "serve: positional argument", args: srv("extra"), code: 2, want: []string{`unexpected argument "extra"`}},
		{name: "serve: pad ratio below 1", args: srv("--max-pad-ratio", "0.5"), code: 2, want: []string{"max pad ratio 0.5: want >= 1"}},
		{name: "serve: store is a directory", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", h.dir}, code: 1, want: []string{"memory store", "is a directory"}},
		{name: "serve: store is garbage", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", h.garbage}, code: 1, want: []string{"memory store", "damaged"}},
		{name: "serve: store is all zeros", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", h.zeros}, code: 1, want: []string{"memory store", "damaged"}},
		{name: "serve: store locked", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", locked}, code: 1, want: []string{"memory store", "locked by another process"}},
		{name: "serve: store under a file", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", h.notDir}, code: 1, want: []string{"memory store", "not a directory"}},
		{name: "serve: store symlink loop", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", h.loop}, code: 1, want: []string{"memory store"}},
		{name: "serve: store of another scheme", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", "mysql://u:pw1234@h/db"}, code: 2, want: []string{`--store has the scheme "mysql"`, "postgres://"}},
		{name: "serve: store postgres with one slash", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", "postgresql:/u@h/db"}, code: 2, want: []string{`without "//"`}},
		{name: "serve: store with a leading space", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", " postgres://u@h/db"}, code: 2, want: []string{"white space"}},
		{name: "store check: store host:port", args: []string{"store", "check", "--store", "localhost:5432/db"}, code: 2, want: []string{`--store has the scheme "localhost"`}},
		{name: "store copy: to none", args: []string{"store", "copy", "--from", h.garbage, "--to", "none"}, code: 2, want: []string{"--to none names no store"}},
		{name: "store copy: onto itself", args: []string{"store", "copy", "--from", h.garbage, "--to", filepath.Dir(h.garbage) + "/./garbage.bin"}, code: 2, want: []string{"the same store file"}},
		{name: "store copy: from a JSON file", args: []string{"store", "copy", "--from", h.truncJSON, "--to", filepath.Join(tmp, "copy.db")}, code: 1, want: []string{"holds text, not a memory store"}},
		{name: "store copy: to pg://", args: []string{"store", "copy", "--from", h.garbage, "--to", "pg://u:pw1234@h/db"}, code: 2, want: []string{`--to has the scheme "pg"`}},
		{name: "store salvage: out is a URL", args: []string{"store", "salvage", "--store", h.garbage, "--out", "postgres://u@h/db"}, code: 2, want: []string{"--out: salvage reads a damaged bbolt file"}},
		{name: "serve: negative vector dim", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", filepath.Join(tmp, "s.db"), "--vector-dim", "-1"}, code: 2, want: []string{"--vector-dim"}},
		{name: "serve: key scopes missing", args: srv("--key-scopes", filepath.Join(tmp, "nope.json")), code: 2, want: []string{"--key-scopes", "no such file"}},
		{name: "serve: key scopes directory", args: srv("--key-scopes", h.dir), code: 2, want: []string{"--key-scopes"}},
		{name: "serve: key scopes garbage", args: srv("--key-scopes", h.garbage), code: 2, want: []string{"--key-scopes"}},
		{name: "serve: key scopes deep JSON", args: srv("--key-scopes", h.deepJSON), code: 2, want: []string{"--key-scopes"}},
		{name: "serve: key scopes truncated JSON", args: srv("--key-scopes", h.truncJSON), code: 2, want: []string{"--key-scopes"}},
		{name: "serve: key scopes path invalid UTF-8", args: srv("--key-scopes", filepath.Join(tmp, bad)), code: 2, want: []string{"--key-scopes"}},
		{name: "serve: mistyped model folder", args: srv("--model", "./models/no-such-reranker"), code: 2, want: []string{"no such folder", "not taken as a hub repo id"}},
		{name: "serve: mistyped folder under an existing one", args: srv("--model", filepath.Join(tmp, "no-such")), code: 2, want: []string{"no such folder"}},
		{name: "convert: mistyped from folder", args: []string{"convert", "--from", "../no-such-checkpoint/", "--out", filepath.Join(tmp, "conv-out")}, code: 2, want: []string{"no such folder"}},
		{name: "serve: calibration of another model", args: srv("--calibration", writeFile(t, tmp, "cal-other.json", calibrationFor(t, "BAAI/bge-reranker-base", 0.7))),
			code: 2, want: []string{`fitted on the scores of model "BAAI/bge-reranker-base"`}},
		{name: "serve: degenerate calibration", args: srv("--calibration", writeFile(t, tmp, "cal-flat.json", calibrationFor(t, "", 0))),
			code: 2, want: []string{"degenerate fit: platt slope 0"}},
		{name: "serve: key scopes with a key twice", args: srv("--key-scopes", writeFile(t, tmp, "dup.json", `{"long-enough-key":["a"],"other-key-0001":["b"],"long-enough-key":["*"]}`)),
			code: 2, want: []string{"entry 3 repeats an earlier key"}},
		{name: "serve: empty postgres URL", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", "postgres://"}, code: 2, want: []string{"names no host or database"}},
		{name: "serve: index memory without a postgres store", args: srv("--index-memory", "1GiB"), code: 2, want: []string{"--index-memory bounds a replica's indexes"}},
		{name: "tokenize: negative max-len", args: []string{"tokenize", "--max-len", "-1"}, code: 2, want: []string{"--max-len -1: want >= 0"}},
		{name: "serve: key scope namespace traversal", args: srv("--key-scopes", writeFile(t, tmp, "scopes.json", `{"long-enough-key":["../other"]}`)), code: 2, want: []string{"../other"}},
		{name: "serve: model path traversal to a folder", args: srv("--model", "../../../../../../../../etc"), code: 1, want: []string{"model.onnx"}},
		{name: "serve: model neither folder nor repo", args: srv("--model", "a/../../b"), code: 2, want: []string{"no such folder"}},
		{name: "serve: model invalid UTF-8", args: srv("--model", bad), code: 2, want: []string{"neither a folder nor a repo id"}},
		{name: "serve: model is a file", args: srv("--model", h.garbage), code: 2, want: []string{"neither a folder nor a repo id"}},
		{name: "serve: model repo not on the hub", args: srv("--model", "nobody/nothing"), code: 1, want: []string{"nobody/nothing"}},
		{name: "serve: ORT library missing", args: srv("--model", h.model["garbage onnx"], "--ort-lib", filepath.Join(tmp, "libnone.so")), code: 1, want: []string{"libnone.so"}},
		{name: "serve: ORT library is garbage", args: srv("--model", h.model["garbage onnx"], "--ort-lib", h.garbage), code: 1, want: []string{"garbage.bin"}},
		{name: "serve: provider unknown", args: srv("--model", h.model["garbage onnx"], "--provider", "abacus"), code: 2, want: []string{"provider"}},

		{name: "tokenize: tokenizer missing", args: []string{"tokenize", "--tokenizer", filepath.Join(tmp, "none.json")}, code: 1, want: []string{"no such file"}},
		{name: "tokenize: tokenizer directory without file", args: []string{"tokenize", "--tokenizer", h.dir}, code: 1, want: []string{"tokenizer.json"}},
		{name: "tokenize: tokenizer garbage", args: []string{"tokenize", "--tokenizer", h.garbage}, code: 1, want: []string{"parse tokenizer.json"}},
		{name: "tokenize: tokenizer empty", args: []string{"tokenize", "--tokenizer", h.empty}, code: 1, want: []string{"parse tokenizer.json"}},
		{name: "tokenize: tokenizer deep JSON", args: []string{"tokenize", "--tokenizer", h.deepJSON}, code: 1, want: []string{"parse tokenizer.json"}},
		{name: "tokenize: tokenizer symlink loop", args: []string{"tokenize", "--tokenizer", h.loop}, code: 1, want: []string{"too many levels of symbolic links"}},
		{name: "tokenize: tokenizer path invalid UTF-8 and NUL", args: []string{"tokenize", "--tokenizer", filepath.Join(tmp, bad)}, code: 1, want: []string{"invalid argument"}},
		{name: "tokenize: tokenizer path invalid UTF-8", args: []string{"tokenize", "--tokenizer", filepath.Join(tmp, "\xff\xfe")}, code: 1, want: []string{"no such file"}},
		{name: "tokenize: stdin binary garbage", args: []string{"tokenize", "--tokenizer", tok}, stdin: "\x00\x01\x02\xff\n", code: 1, want: []string{"line 1: want a JSON object"}},
		{name: "tokenize: stdin raw NUL in string", args: []string{"tokenize", "--tokenizer", tok}, stdin: "{\"text\":\"a\x00b\"}\n", code: 1, want: []string{"line 1"}},
		{name: "tokenize: stdin deep nesting", args: []string{"tokenize", "--tokenizer", tok}, stdin: strings.Repeat("[", 100_000) + "\n", code: 1, want: []string{"line 1", "exceeded max depth"}},
		{name: "tokenize: stdin text 1e400", args: []string{"tokenize", "--tokenizer", tok}, stdin: `{"text":1e400}`, code: 1, want: []string{"line 1"}},
		{name: "tokenize: stdin second line truncated", args: []string{"tokenize", "--tokenizer", tok}, stdin: "{\"text\":\"ok\"}\n{\"text\":\"tru", code: 1, want: []string{"line 2"}, out: `{"ids":[`},
		{name: "tokenize: invalid UTF-8 text (U+FFFD)", args: []string{"tokenize", "--tokenizer", tok}, stdin: "{\"text\":\"a\xffb\"}\n", code: 0, out: `{"ids":[64,`},
		{name: "tokenize: escaped NUL text (accepted)", args: []string{"tokenize", "--tokenizer", tok}, stdin: `{"text":"a\u0000b"}`, code: 0, out: `{"ids":[64,`},
		{name: "tokenize: duplicate key (last wins)", args: []string{"tokenize", "--tokenizer", tok}, stdin: `{"text":5,"text":"a"}`, code: 1, want: []string{"line 1"}},

		{name: "score: no flags", args: []string{"score"}, code: 2, want: []string{"--model", "--query"}},
		{name: "score: model missing", args: []string{"score", "--model", filepath.Join(tmp, "nomodel"), "--query", "q", "--doc", "d"}, code: 1, want: []string{"nomodel"}},
		{name: "score: model is a file", args: []string{"score", "--model", h.garbage, "--query", "q", "--doc", "d"}, code: 1, want: []string{"model.onnx"}},
		{name: "score: bad CUDA settings", args: []string{"score", "--model", h.garbage, "--query", "q", "--doc", "d", "--provider", "cuda", "--gpu-mem-limit-mb", "-1", "--cuda-arena-extend", "doubling"},
			code: 2, want: []string{"gpu memory limit -1", `arena extend strategy "doubling"`}},
		{name: "score: provider unknown", args: []string{"score", "--model", h.garbage, "--query", "q", "--doc", "d", "--provider", "rocm"}, code: 2, want: []string{`provider "rocm"`}},
		{name: "score: model path traversal", args: []string{"score", "--model", "../../../../../../../../etc", "--query", "q", "--doc", "d"}, code: 1, want: []string{"model.onnx"}},
		{name: "score: max length negative", args: []string{"score", "--model", h.dir, "--query", "q", "--max-length", "-1"}, code: 2, want: []string{"max length"}},
		{name: "score: threads 2^63", args: []string{"score", "--model", h.dir, "--query", "q", "--threads", "9223372036854775808"}, code: 2, want: []string{"-threads"}},
		{name: "score: invalid UTF-8 query, no model", args: []string{"score", "--model", filepath.Join(tmp, bad), "--query", bad, "--doc", bad}, code: 1, want: []string{"model folder"}},
		{name: "score: ORT library missing", args: []string{"score", "--model", h.model["garbage onnx"], "--query", "q", "--doc", "d", "--ort-lib", filepath.Join(tmp, "nolib.so")}, code: 1, want: []string{"nolib.so"}},
		{name: "score: ORT library is a directory", args: []string{"score", "--model", h.model["garbage onnx"], "--query", "q", "--doc", "d", "--ort-lib", h.dir}, code: 1, want: []string{"adir"}},
		{name: "score: tokenizer missing and none in folder", args: []string{"score", "--model", h.model["onnx is a directory"], "--query", "q", "--doc", "d", "--tokenizer", filepath.Join(tmp, "none")}, code: 1, want: []string{""}},

		{name: "testmodel: no --out", args: []string{"testmodel"}, code: 2, want: []string{"--out"}},
		{name: "testmodel: seed negative", args: []string{"testmodel", "--out", filepath.Join(tmp, "m"), "--seed", "-1"}, code: 2, want: []string{"-seed"}},
		{name: "testmodel: seed 2^64", args: []string{"testmodel", "--out", filepath.Join(tmp, "m"), "--seed", "18446744073709551616"}, code: 2, want: []string{"value out of range"}},
		{name: "testmodel: size invalid UTF-8", args: []string{"testmodel", "--out", filepath.Join(tmp, "m"), "--size", bad}, code: 2, want: []string{"--size"}},
		{name: "testmodel: tokenizer missing", args: []string{"testmodel", "--out", filepath.Join(tmp, "m2"), "--tokenizer", filepath.Join(tmp, "none")}, code: 1, want: []string{"none"}},
		{name: "testmodel: tokenizer garbage", args: []string{"testmodel", "--out", filepath.Join(tmp, "m3"), "--tokenizer", h.garbage}, code: 1, want: []string{"garbage.bin"}},
		{name: "testmodel: out under a file", args: []string{"testmodel", "--out", h.notDir, "--tokenizer", tok}, code: 1, want: []string{"not a directory"}},

		{name: "convert: no flags", args: []string{"convert"}, code: 2, want: []string{"--from and --out"}},
		{name: "convert: from a file", args: []string{"convert", "--from", h.garbage, "--out", filepath.Join(tmp, "c")}, code: 2, want: []string{"neither a folder nor a repo id"}},
		{name: "convert: from traversal", args: []string{"convert", "--from", "../../x/../..", "--out", filepath.Join(tmp, "c")}, code: 2, want: []string{"no such folder"}},
		{name: "convert: from traversal to a folder", args: []string{"convert", "--from", "../../../../../../../../etc", "--out", filepath.Join(tmp, "c")}, code: 1, want: []string{"config.json"}},
		{name: "convert: from invalid UTF-8", args: []string{"convert", "--from", bad, "--out", filepath.Join(tmp, "c")}, code: 2, want: []string{"neither a folder nor a repo id"}},
		{name: "convert: from an empty folder", args: []string{"convert", "--from", h.dir, "--out", filepath.Join(tmp, "c")}, code: 1, want: []string{"adir"}},
		{name: "convert: from garbage checkpoint", args: []string{"convert", "--from", h.model["garbage config"], "--out", filepath.Join(tmp, "c")}, code: 1, want: []string{"config.json"}},
		{name: "convert: from repo not on the hub", args: []string{"convert", "--from", "nobody/nothing", "--out", filepath.Join(tmp, "c")}, code: 1, want: []string{"nobody/nothing"}},
		{name: "convert: revision traversal", args: []string{"convert", "--from", "nobody/nothing", "--revision", "../../etc", "--out", filepath.Join(tmp, "c")}, code: 1, want: []string{""}},

		{name: "version: extra argument (ignored)", args: []string{"version", bad}, code: 0, out: "rerankd "},
		{name: "help: unknown topic", args: []string{"help", "zz"}, code: 0},
	}
	// Every broken model folder, through score with both engines.
	for name, dir := range h.model {
		for _, engine := range []string{"onnx", "reference"} {
			cases = append(cases, cliCase{name: "score: " + name + " (" + engine + ")",
				args: []string{"score", "--model", dir, "--query", "q", "--doc", "d", "--engine", engine, "--tokenizer", tok}, code: 1})
		}
	}
	return cases
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadInputCLI runs every catalogue entry in-process: each fails with
// the documented exit status and a clear message on stderr, and none
// panics or hangs.
func TestBadInputCLI(t *testing.T) {
	ortLib, tokDir := testenv.ORTLib(), testenv.TokenizerDir()
	t.Setenv("RERANKD_DATA", t.TempDir()) // never the real memory store
	t.Setenv("HF_ENDPOINT", notFoundHub(t))
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	t.Setenv("RERANKD_CACHE", t.TempDir()) // hub downloads and converted models
	t.Setenv("ORT_LIB", ortLib)
	cases := rerankdCatalogue(t, tokDir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runGuarded(t, c.stdin, c.args)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			switch {
			case c.code != 0 && strings.TrimSpace(errs) == "":
				t.Error("failed without a message on stderr")
			case c.code != 0 && c.out == "" && out != "":
				t.Errorf("stdout %q on failure", out)
			case !strings.Contains(out, c.out):
				t.Errorf("stdout %q lacks %q", out, c.out)
			}
			if c.code != 0 && len(c.args) > 0 && c.args[0] != "help" && !strings.Contains(errs, "rerankd") {
				t.Errorf("stderr %q does not say which program failed", errs)
			}
			for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
				if strings.HasPrefix(line, "rerankd ") && c.code != 0 {
					for _, p := range msgcheck.Problems(line) {
						t.Errorf("stderr line %q: %s", line, p)
					}
				}
			}
			if strings.Contains(errs, "pw1234") {
				t.Errorf("stderr shows the password of the store URL: %q", errs)
			}
			if strings.Contains(errs, "another rerankd may hold it") {
				t.Errorf("stderr blames a lock that is not there: %q", errs)
			}
			if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
				t.Errorf("stderr looks like a crash: %q", errs)
			}
		})
	}
	t.Logf("%d CLI catalogue entries", len(cases))
}

// calibrationFor is calibrate's golden Platt file with the model and slope
// set.
func calibrationFor(t *testing.T, model string, slope float64) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "calibrate", "testdata", "calibration-platt.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := calibrate.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	c.Source.Model, c.Platt.Slope = model, slope
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
