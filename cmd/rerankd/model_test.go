package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/testmodel"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/tokenizer"
)

type scoreOut struct {
	Scores []float64 `json:"scores"`
	Logits []float64 `json:"logits"`
}

// runCLI runs rerankd with args in this process. "testmodel", which
// moved to rerankd-bench, still makes these tests' fixtures: it runs the
// lab's command (cmd/internal/testmodel) under rerankd-bench's name.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	p := program()
	if len(args) > 0 && args[0] == "testmodel" {
		p = cli.Program{Name: "rerankd-bench", Commands: []cli.Command{{Name: "testmodel", Run: testmodel.Run}}}
	}
	code := p.Run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func scoreCLI(t *testing.T, args ...string) scoreOut {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"score"}, args...)...)
	if code != 0 {
		t.Fatalf("score %v: exit %d: %s", args, code, errs)
	}
	var s scoreOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("score output %q: %v", out, err)
	}
	return s
}

// TestTestModelAndScore: testmodel writes a folder both engines can score,
// in document order, with the same numbers.
func TestTestModelAndScore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if code, _, errs := runCLI(t, "testmodel", "--out", dir, "--seed", "3"); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	docs := []string{"--doc", "Caroline went to the support group", "--doc", "Melanie painted a sunset", "--doc", ""}
	args := append([]string{"--model", dir, "--query", "What did Caroline do?"}, docs...)
	onnxOut := scoreCLI(t, args...)
	refOut := scoreCLI(t, append(args, "--engine", "reference")...)
	if len(onnxOut.Scores) != 3 || len(onnxOut.Logits) != 3 {
		t.Fatalf("want 3 scores and logits, got %+v", onnxOut)
	}
	for i := range onnxOut.Scores {
		if math.Abs(onnxOut.Logits[i]-refOut.Logits[i]) > 1e-4 {
			t.Errorf("doc %d: onnx %.6f vs reference %.6f", i, onnxOut.Logits[i], refOut.Logits[i])
		}
		if math.Abs(onnxOut.Scores[i]-rerank.Sigmoid(onnxOut.Logits[i])) > 1e-12 {
			t.Errorf("doc %d: score is not sigmoid(logit)", i)
		}
	}
	// Order: scoring the documents reversed gives the reversed list.
	rev := scoreCLI(t, "--model", dir, "--query", "What did Caroline do?", "--doc", "", "--doc", "Melanie painted a sunset", "--doc", "Caroline went to the support group")
	for i := range rev.Logits {
		if math.Abs(rev.Logits[i]-onnxOut.Logits[2-i]) > 1e-6 {
			t.Errorf("reversed order: doc %d logit %.6f, want %.6f", i, rev.Logits[i], onnxOut.Logits[2-i])
		}
	}
}

func TestModelCLIErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"score", "--query", "q"}, 2, "--model"},
		{[]string{"score", "--model", "/nonexistent"}, 2, "--query"},
		{[]string{"score", "--model", "/nonexistent", "--query", "q", "--doc", "d"}, 1, "/nonexistent"},
		{[]string{"score", "--model", "/x", "--query", "q", "--engine", "gpu"}, 2, "engine"},
		{[]string{"score", "--model", "/x", "--query", "q", "--provider", "tpu"}, 2, "provider"},
		{[]string{"score", "--model", "/x", "--query", "q", "--max-length", "3"}, 2, "max length"},
		{[]string{"testmodel"}, 2, "--out"},
		{[]string{"testmodel", "--out", "/tmp/x", "--size", "huge"}, 2, "--size"},
		{[]string{"testmodel", "--out", "/tmp/x", "--head", "weird"}, 2, "head"},
		{[]string{"convert", "--out", "/tmp/x"}, 2, "--from"},
		{[]string{"convert", "--from", "not a repo!", "--out", "/tmp/x"}, 2, "repo id"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// serveHub starts fakeHub for repo and points the CLI's hub downloads at
// it, with a fresh download cache.
func serveHub(t *testing.T, repo, dir string) {
	t.Helper()
	srv := fakeHub(t, repo, dir)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("ORT_LIB", defaultORTLib()) // keep run-time files while the hub cache moves
	t.Setenv("RERANKD_TOKENIZER", defaultTokenizer())
	t.Setenv("RERANKD_CACHE", t.TempDir())
}

// fakeHub serves the files of one repo the way the Hugging Face hub does:
// the revision API listing, and resolve URLs with Range support and an
// ETag holding the sha256 (as LFS files have).
//
// testtiers: static server
func fakeHub(t *testing.T, repo, dir string) *httptest.Server {
	t.Helper()
	var siblings []map[string]string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			siblings = append(siblings, map[string]string{"rfilename": filepath.ToSlash(rel)})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	siblings = append(siblings, map[string]string{"rfilename": "README.md"}) // listed, not needed
	const sha = "0123456789abcdef0123456789abcdef01234567"
	mux := http.NewServeMux()
	mux.HandleFunc("/api/models/"+repo+"/revision/", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"id": repo, "sha": sha, "siblings": siblings})
	})
	mux.HandleFunc("/"+repo+"/resolve/"+sha+"/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/"+repo+"/resolve/"+sha+"/")
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		http.ServeContent(w, r, name, fixedTime, bytes.NewReader(data))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestConvertRoundTrip: a tiny checkpoint in Hugging Face layout (bf16,
// two shards) is downloaded from a local hub, converted, and scored; the
// scores equal the reference pass over the original weights.
func TestConvertRoundTrip(t *testing.T) {
	w, err := arch.Random(arch.Tiny(), 11)
	if err != nil {
		t.Fatal(err)
	}
	ckpt := t.TempDir()
	if err := hf.WriteCheckpoint(ckpt, w, "BF16", 2); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tokenizer.FileName, tokenizer.ConfigFileName} {
		data, err := os.ReadFile(filepath.Join(defaultTokenizer(), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ckpt, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := hf.LoadCheckpoint(ckpt) // bf16-rounded weights: the true source
	if err != nil {
		t.Fatal(err)
	}
	serveHub(t, "test/tiny-reranker", ckpt)
	out := filepath.Join(t.TempDir(), "converted")
	if code, _, errs := runCLI(t, "convert", "--from", "test/tiny-reranker", "--out", out); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	// Converting the local folder gives the same model.
	out2 := filepath.Join(t.TempDir(), "converted-local")
	if code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", out2); code != 0 {
		t.Fatalf("convert local: %s", errs)
	}
	docs := []string{"Caroline went to the support group yesterday.", "We adopted a cat named Luna.", "x"}
	var args []string
	for _, d := range docs {
		args = append(args, "--doc", d)
	}
	got := scoreCLI(t, append([]string{"--model", out, "--query", "Did Caroline attend a support group?"}, args...)...)
	got2 := scoreCLI(t, append([]string{"--model", out2, "--query", "Did Caroline attend a support group?"}, args...)...)

	tok, err := tokenizer.Shared(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	yes, _ := tok.TokenID("yes")
	no, _ := tok.TokenID("no")
	head, err := loaded.HeadDiff(yes, no)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := rerank.NewScorer(tok, model.NewReferenceEngine(loaded, head), rerank.DefaultScorerConfig())
	if err != nil {
		t.Fatal(err)
	}
	want, err := sc.Score(context.Background(), rerank.Request{Query: "Did Caroline attend a support group?", Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		if math.Abs(got.Logits[i]-want[i].Logit) > 1e-4 || math.Abs(got2.Logits[i]-want[i].Logit) > 1e-4 {
			t.Errorf("doc %d: hub %.6f, local %.6f, reference %.6f", i, got.Logits[i], got2.Logits[i], want[i].Logit)
		}
	}
}

var fixedTime = mustTime("2026-01-01T00:00:00Z")
