package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
)

// retrievalEmbedder is retrieval's Embedder interface, restated here (model
// must not import retrieval): *Embedder has to satisfy it exactly.
type retrievalEmbedder interface {
	Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error)
	Dim() int
}

var _ retrievalEmbedder = (*Embedder)(nil)

// embedTestConfig is arch.Tiny (real vocabulary: the tokenizer's ids and
// <|endoftext|> must fit) at half its width, so fixtures build and load
// fast under the race detector.
func embedTestConfig() arch.Config {
	c := arch.Tiny()
	c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.IntermediateSize = 32, 4, 2, 8, 64
	return c
}

// tinyEmbeddingModel writes (once per run) a tiny random embedding model
// with the given outputs and returns its folder.
func tinyEmbeddingModel(t testing.TB, outs onnx.EmbeddingOutputs, external bool) string {
	t.Helper()
	return fixture.EmbeddingModel(t, embedTestConfig(), 11,
		folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), EmbeddingOutputs: outs, ForceExternal: external})
}

func openEmbedder(t testing.TB, dir string, engine EngineKind, cfg EmbedConfig) *Embedder {
	t.Helper()
	o := DefaultEmbedderOptions()
	o.Engine, o.RuntimeLib, o.Embed = engine, testenv.ORTLib(), cfg
	o.Session.IntraOpThreads = 2
	e, err := OpenEmbedder(dir, withTok(t, o))
	if err != nil {
		t.Fatalf("open embedder %s (%s): %v", dir, engine, err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func embedAll(t testing.TB, e *Embedder, texts []string, isQuery bool) [][]float32 {
	t.Helper()
	out, err := e.Embed(context.Background(), texts, isQuery)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(out), len(texts))
	}
	return out
}

// compare returns the smallest cosine and the largest absolute difference
// between two lists of vectors.
func compare(t testing.TB, got, want [][]float32) (minCos, maxDiff float64) {
	t.Helper()
	minCos = 1
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("vector %d: %d values, want %d", i, len(got[i]), len(want[i]))
		}
		var dot, ng, nw float64
		for j := range got[i] {
			g, w := float64(got[i][j]), float64(want[i][j])
			dot, ng, nw = dot+g*w, ng+g*g, nw+w*w
			maxDiff = math.Max(maxDiff, math.Abs(g-w))
		}
		minCos = math.Min(minCos, dot/math.Sqrt(ng*nw))
	}
	return minCos, maxDiff
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// TestEmbedORTMatchesReference: ONNX Runtime and the plain-Go pass agree
// within 1e-4 (cosine > 0.9999) on mixed-length queries and documents
// batched with padding, with inline and external weights.
func TestEmbedORTMatchesReference(t *testing.T) {
	docs := mixedDocs(12)
	// Both fixtures hold the same seeded weights: one reference suffices.
	refE := openEmbedder(t, tinyEmbeddingModel(t, onnx.EmbedHidden, false), EngineReference, DefaultEmbedConfig())
	for _, external := range []bool{false, true} {
		ortE := openEmbedder(t, tinyEmbeddingModel(t, onnx.EmbedHidden, external), EngineONNX, DefaultEmbedConfig())
		for _, isQuery := range []bool{false, true} {
			got, want := embedAll(t, ortE, docs, isQuery), embedAll(t, refE, docs, isQuery)
			minCos, maxDiff := compare(t, got, want)
			if minCos < 0.9999 || maxDiff > 1e-4 {
				t.Errorf("external=%v query=%v: min cosine %.7f, max |ORT - reference| %.3g", external, isQuery, minCos, maxDiff)
			}
			t.Logf("external=%v query=%v: min cosine %.9f, max |ORT - reference| %.3g over %d texts of %d values",
				external, isQuery, minCos, maxDiff, len(docs), len(got[0]))
			for i, v := range got {
				if math.Abs(norm(v)-1) > 1e-5 {
					t.Errorf("vector %d has norm %.7f", i, norm(v))
				}
			}
		}
	}
}

// TestEmbedBatchInvariance: a text's vector is the same alone, in a batch
// of mixed lengths, reversed, and in groups of 3 (within 1e-6); and the
// test model separates texts.
func TestEmbedBatchInvariance(t *testing.T) {
	dir := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	e := openEmbedder(t, dir, EngineONNX, DefaultEmbedConfig())
	small := DefaultEmbedConfig()
	small.MaxBatch = 3
	grouped, err := e.WithConfig(small)
	if err != nil {
		t.Fatal(err)
	}
	docs := mixedDocs(16)
	batch := embedAll(t, e, docs, false)
	rev := slices.Clone(docs)
	slices.Reverse(rev)
	reversed := embedAll(t, e, rev, false)
	slices.Reverse(reversed)
	groups := embedAll(t, grouped, docs, false)
	for i, d := range docs {
		alone := embedAll(t, e, []string{d}, false)
		for name, v := range map[string][][]float32{"batch": batch, "reversed": reversed, "groups of 3": groups} {
			if _, diff := compare(t, v[i:i+1], alone); diff > 1e-6 {
				t.Errorf("doc %d: %s differs from alone by %.3g", i, name, diff)
			}
		}
	}
	if c, _ := compare(t, batch[:1], batch[1:2]); c > 0.999 {
		t.Errorf("two different texts have cosine %.6f: the test model should separate them", c)
	}
	// Concurrent calls share the session safely and give the same vectors.
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			v, err := e.Embed(context.Background(), docs[4*g:4*g+4], false)
			if err == nil {
				if _, diff := compare(t, v, batch[4*g:4*g+4]); diff > 1e-6 {
					err = fmt.Errorf("goroutine %d: vectors differ by %.3g", g, diff)
				}
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestEmbedPaddingSide: the official code pads on the left and reads the
// final position; rerankd pads on the right and reads sum(mask)-1. The
// vectors agree (RoPE makes attention depend on relative positions only,
// so shifting a row's tokens right changes nothing but rounding).
func TestEmbedPaddingSide(t *testing.T) {
	dir := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	o := DefaultSessionConfig()
	o.IntraOpThreads = 2
	s, err := OpenEmbeddingSession(filepath.Join(dir, onnx.ModelFile), 151643, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close() //nolint:errcheck // test cleanup
	tok := tokentest.Qwen(t)
	var seqs [][]int
	for _, d := range mixedDocs(6) {
		seqs = append(seqs, append(tok.EncodeIDs(d), 151643))
	}
	right, err := s.Pooled(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	s.padLeft = true
	left, err := s.Pooled(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	minCos, maxDiff := compare(t, left, right)
	if minCos < 0.99999 || maxDiff > 1e-4 {
		t.Errorf("left vs right padding: min cosine %.7f, max diff %.3g", minCos, maxDiff)
	}
	t.Logf("left vs right padding (unnormalised pooled states): min cosine %.9f, max diff %.3g", minCos, maxDiff)
}

// TestEmbedOutputLayouts: last_hidden_state only (pooled in Go), both
// outputs (last_hidden_state preferred), and a pooled output only
// (equal-length batches) give the same vectors.
func TestEmbedOutputLayouts(t *testing.T) {
	docs := append(mixedDocs(7), "same length A", "same length B")
	want := embedAll(t, openEmbedder(t, tinyEmbeddingModel(t, onnx.EmbedHidden, false), EngineONNX, DefaultEmbedConfig()), docs, false)
	for _, c := range []struct {
		outs     onnx.EmbeddingOutputs
		kind     EmbeddingOutput
		sameLens bool
	}{
		{onnx.EmbedHidden, EmbedOutputHidden, false},
		{onnx.EmbedHiddenAndPooled, EmbedOutputHidden, false},
		{onnx.EmbedPooled, EmbedOutputPooled, true},
	} {
		e := openEmbedder(t, tinyEmbeddingModel(t, c.outs, false), EngineONNX, DefaultEmbedConfig())
		if got := e.Info().Output; got != c.kind {
			t.Errorf("%v: reads %v, want %v", c.outs, got, c.kind)
		}
		if got := e.engine.SameLengthBatches(); got != c.sameLens {
			t.Errorf("%v: same-length batches %v", c.outs, got)
		}
		minCos, maxDiff := compare(t, embedAll(t, e, docs, false), want)
		if maxDiff > 1e-5 {
			t.Errorf("%v: differs from last_hidden_state pooling by %.3g (min cosine %.7f)", c.outs, maxDiff, minCos)
		}
	}
}

// TestEmbedInputFormat: queries are "Instruct: {task}\nQuery:{query}",
// documents as they are, every input ends with <|endoftext|> (151643), and
// truncation keeps that token.
func TestEmbedInputFormat(t *testing.T) {
	dir := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	cfg := DefaultEmbedConfig()
	cfg.MaxLength = 40
	e := openEmbedder(t, dir, EngineONNX, cfg)
	tok := tokentest.Qwen(t)
	const eot = 151643
	if info := e.Info(); !slices.Equal(info.EndTokens, []int{eot}) || info.QueryPrefix != folder.QueryPrefix(folder.DefaultEmbedInstruction) {
		t.Errorf("info %+v", info)
	}
	q := "What is the capital of China?"
	for _, tc := range []struct {
		name    string
		text    string
		isQuery bool
		want    []int
		cut     bool
	}{
		{"document", "The capital of China is Beijing.", false, append(tok.EncodeIDs("The capital of China is Beijing."), eot), false},
		{"query", q, true, append(tok.EncodeIDs("Instruct: "+folder.DefaultEmbedInstruction+"\nQuery:"+q), eot), false},
		{"long document", strings.Repeat("memory ", 100), false, append(tok.EncodeIDs(strings.Repeat("memory ", 100))[:39], eot), true},
	} {
		got, cut := e.Tokens(tc.text, tc.isQuery)
		if !slices.Equal(got, tc.want) || cut != tc.cut {
			t.Errorf("%s: ids %v (cut %v), want %v (cut %v)", tc.name, got, cut, tc.want, tc.cut)
		}
	}
	// A custom instruction replaces the default one.
	cfg.Instruction = "Retrieve memories of the user"
	custom, err := e.WithConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := custom.Tokens("q", true)
	if want := append(tok.EncodeIDs("Instruct: Retrieve memories of the user\nQuery:q"), eot); !slices.Equal(got, want) {
		t.Errorf("custom instruction: %v, want %v", got, want)
	}
	// The vector is the reference forward pass at exactly those ids (the
	// fixture's weights are arch.Random(embedTestConfig(), 11)).
	w, err := arch.Random(embedTestConfig().Backbone(), 11)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text    string
		isQuery bool
	}{{q, true}, {strings.Repeat("memory ", 100), false}} {
		v := embedAll(t, e, []string{c.text}, c.isQuery)
		ids, _ := e.Tokens(c.text, c.isQuery)
		r, err := ref.Embedding(w, ids)
		if err != nil {
			t.Fatal(err)
		}
		if minCos, diff := compare(t, v, [][]float32{r}); diff > 1e-4 || minCos < 0.9999 {
			t.Errorf("%.20q: differs from ref.Embedding by %.3g (cosine %.7f)", c.text, diff, minCos)
		}
	}
}

// TestEmbedMatryoshka: Dim keeps the first values and re-normalises.
func TestEmbedMatryoshka(t *testing.T) {
	dir := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	full := openEmbedder(t, dir, EngineONNX, DefaultEmbedConfig())
	cfg := DefaultEmbedConfig()
	cfg.Dim = 16
	short, err := full.WithConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if short.Dim() != 16 || full.Dim() != 32 {
		t.Fatalf("dims %d and %d", short.Dim(), full.Dim())
	}
	docs := mixedDocs(4)
	f, s := embedAll(t, full, docs, false), embedAll(t, short, docs, false)
	for i := range docs {
		want, err := ref.L2Normalize(f[i][:16])
		if err != nil {
			t.Fatal(err)
		}
		if _, diff := compare(t, s[i:i+1], [][]float32{want}); diff > 1e-6 {
			t.Errorf("doc %d: truncated vector differs from normalise(full[:16]) by %.3g", i, diff)
		}
	}
	if short.Info().Dim != 16 || short.Info().ModelDim != 32 || full.Dim() != 32 {
		t.Errorf("info %+v; full dim %d", short.Info(), full.Dim())
	}
	cfg.Dim = 33
	if _, err := full.WithConfig(cfg); !errors.Is(err, ErrDimension) || !strings.Contains(err.Error(), "33") || !strings.Contains(err.Error(), "32") {
		t.Errorf("dim 33 of 32: %v", err)
	}
}

// TestEmbedErrors: blank texts, cancellation, no texts.
func TestEmbedErrors(t *testing.T) {
	e := openEmbedder(t, tinyEmbeddingModel(t, onnx.EmbedHidden, false), EngineONNX, DefaultEmbedConfig())
	_, err := e.Embed(context.Background(), []string{"fine", " ", ""}, false)
	if !errors.Is(err, ErrEmptyText) || !strings.Contains(err.Error(), "text 1") || !strings.Contains(err.Error(), "text 2") {
		t.Errorf("blank texts: %v", err)
	}
	if out, err := e.Embed(context.Background(), nil, true); err != nil || len(out) != 0 {
		t.Errorf("no texts: %v, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}, false); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestOpenEmbedderRefuses: folders that are not embedding models, or whose
// stated sizes disagree, are refused with errors naming what was found.
func TestOpenEmbedderRefuses(t *testing.T) {
	o := DefaultEmbedderOptions()
	o.RuntimeLib = testenv.ORTLib()
	src := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	// A reranker graph (a small one, in place of the embedding graph).
	rr := cloneFolder(t, src, onnx.ModelFile)
	c := arch.Tiny()
	c.VocabSize, c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.IntermediateSize = 50, 16, 2, 1, 8, 32
	w, err := arch.Random(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.BuildReranker(w, onnx.NewOptions(7, 3))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(rr); err != nil {
		t.Fatal(err)
	}
	_, err = OpenEmbedder(rr, withTok(t, o))
	if !errors.Is(err, ErrIncompatibleModel) || !strings.Contains(err.Error(), `found logits`) {
		t.Errorf("reranker folder: %v", err)
	}
	// config.json and 1_Pooling disagree with the graph.
	for _, tc := range []struct {
		file, from, to, want string
	}{
		{"config.json", `"hidden_size": 32`, `"hidden_size": 128`, "config.json hidden_size says 128"},
		{folder.STPoolingFile, `"word_embedding_dimension": 32`, `"word_embedding_dimension": 16`, "word_embedding_dimension says 16"},
		{folder.STPoolingFile, `"pooling_mode_mean_tokens": false`, `"pooling_mode_mean_tokens": true`, "last-token pooling"},
	} {
		dir := cloneFolder(t, src, tc.file)
		p := filepath.Join(dir, filepath.FromSlash(tc.file))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.from) {
			t.Fatalf("%s lacks %s:\n%s", tc.file, tc.from, data)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), tc.from, tc.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if e, err := OpenEmbedder(dir, withTok(t, o)); err == nil || !strings.Contains(err.Error(), tc.want) {
			if e != nil {
				_ = e.Close()
			}
			t.Errorf("%s %s: %v, want it to say %q", tc.file, tc.to, err, tc.want)
		}
	}
}

// cloneFolder returns a folder mirroring src (one level of subfolders)
// with symbolic links, except for the files named in edit, which are
// copies the test may change.
func cloneFolder(t testing.TB, src string, edit ...string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case slices.Contains(edit, filepath.ToSlash(rel)):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		default:
			return os.Symlink(p, filepath.Join(dst, rel))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestEmbeddingFolderLayout: the test model is laid out as Hugging Face's
// Qwen3-Embedding: sentence-transformers files, a tokenizer whose template
// appends <|endoftext|>, config.json, and no reranker head.
func TestEmbeddingFolderLayout(t *testing.T) {
	dir := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	for _, f := range []string{onnx.ModelFile, "config.json", "tokenizer.json", "tokenizer_config.json", folder.STModulesFile, folder.STPoolingFile, folder.STConfigFile} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	tmpl, ok, err := folder.ReadPostProcessor(filepath.Join(dir, "tokenizer.json"))
	if err != nil || !ok || len(tmpl.Prefix) != 0 || !slices.Equal(tmpl.Suffix, []int{151643}) {
		t.Errorf("tokenizer template %+v, %v, %v", tmpl, ok, err)
	}
	st, err := folder.ReadSTSettings(dir)
	if err != nil || st.QueryPrompt != folder.QueryPrefix(folder.DefaultEmbedInstruction) || !st.HasDoc || st.DocPrompt != "" || st.PoolingDim != 32 {
		t.Errorf("sentence-transformers settings %+v, %v", st, err)
	}
	m, err := onnx.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := m.Meta(onnx.MetaKind); k != onnx.KindEmbedding {
		t.Errorf("kind %q", k)
	}
	if _, _, err := m.Weights(); err == nil || !strings.Contains(err.Error(), "OpenEmbedder") {
		t.Errorf("reranker weights of an embedding model: %v", err)
	}
	if kind, why, err := folder.DetectKind(dir); err != nil || kind != folder.KindEmbedding {
		t.Errorf("DetectKind = %v (%s), %v", kind, why, err)
	}
}
