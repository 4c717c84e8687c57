package model

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

const query = "What did Caroline do at the support group?"

// TestORTMatchesReference: ONNX Runtime and the plain-Go pass agree within
// 1e-4 on a tiny model for a mixed-length batch (padding included).
func TestORTMatchesReference(t *testing.T) {
	for _, external := range []bool{false, true} {
		if external && testing.Short() {
			continue // -short: inline weights only
		}
		dir := tinyModel(t, onnx.HeadLogit, external)
		r := rerank.Request{Query: query, Docs: mixedDocs(12)}
		got := scoreAll(t, openModel(t, dir, EngineONNX, rerank.DefaultScorerConfig()), r)
		want := scoreAll(t, openModel(t, dir, EngineReference, rerank.DefaultScorerConfig()), r)
		maxErr := 0.0
		for i := range got {
			maxErr = math.Max(maxErr, math.Abs(got[i].Logit-want[i].Logit))
		}
		if maxErr > 1e-4 {
			t.Errorf("external=%v: max |ORT - reference| = %g > 1e-4", external, maxErr)
		}
		t.Logf("external=%v: max |ORT - reference| logit = %.3g over %d pairs", external, maxErr, len(got))
	}
}

// TestORTMatchesReferenceUntied: a checkpoint with its own lm_head
// (tie_word_embeddings false) scores the same on both engines, within 1e-5
// in probability, for the folded head and for a (no, yes) head read from
// the full lm_head initializer.
func TestORTMatchesReferenceUntied(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestORTMatchesReference checks the tied head")
	}
	r := rerank.Request{Query: query, Docs: mixedDocs(6)}
	for _, head := range []onnx.Head{onnx.HeadLogit, onnx.HeadYesNo} {
		dir := tinyModelOf(t, tinyUntied(), head, true) // external: one copy of the weights for its graphs
		got := scoreAll(t, openModel(t, dir, EngineONNX, rerank.DefaultScorerConfig()), r)
		want := scoreAll(t, openModel(t, dir, EngineReference, rerank.DefaultScorerConfig()), r)
		maxErr := 0.0
		for i := range got {
			maxErr = math.Max(maxErr, math.Abs(got[i].Score-want[i].Score))
		}
		if maxErr > 1e-5 {
			t.Errorf("%v: max |ORT - reference| probability = %g > 1e-5", head, maxErr)
		}
		t.Logf("%v: max |ORT - reference| probability = %.3g over %d pairs", head, maxErr, len(got))
	}
}

// TestBatchInvariance: a pair's score is the same alone, in a batch of 32
// of mixed lengths, and in any order (within 1e-6).
func TestBatchInvariance(t *testing.T) {
	s := openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, rerank.DefaultScorerConfig())
	docs := mixedDocs(32)
	batch := scoreAll(t, s, rerank.Request{Query: query, Docs: docs})
	rev := slices.Clone(docs)
	slices.Reverse(rev)
	reversed := scoreAll(t, s, rerank.Request{Query: query, Docs: rev})
	// Small batches force different groupings and paddings.
	small := rerank.DefaultScorerConfig()
	small.MaxBatch = 3
	grouped := scoreAll(t, openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, small), rerank.Request{Query: query, Docs: docs})
	for i, d := range docs {
		alone := scoreAll(t, s, rerank.Request{Query: query, Docs: []string{d}})[0]
		for name, v := range map[string]float64{"batch": batch[i].Score, "reversed": reversed[len(docs)-1-i].Score, "groups of 3": grouped[i].Score} {
			if math.Abs(v-alone.Score) > 1e-6 {
				t.Errorf("doc %d: %s score %.9f, alone %.9f", i, name, v, alone.Score)
			}
		}
	}
	spread := 0.0
	for _, b := range batch {
		spread = math.Max(spread, math.Abs(b.Score-batch[0].Score))
	}
	if spread < 1e-3 {
		t.Errorf("all scores within %g: the test model should separate documents", spread)
	}
}

// TestCommunityHeads: models whose output is (no, yes), full vocabulary at
// the last token, or full vocabulary at every token are detected and give
// the same logits as our folded head.
func TestCommunityHeads(t *testing.T) {
	r := rerank.Request{Query: query, Docs: mixedDocs(5)}
	// The full-vocabulary layouts and our head from folders with external
	// weights (ONNX Runtime reads them without parsing an inline copy per
	// graph); the two-row head from the inline folder TestGraphIOMatchesRuntime reads.
	want := scoreAll(t, openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, rerank.DefaultScorerConfig()), r)
	cases := []struct {
		head onnx.Head
		kind OutputKind
	}{{onnx.HeadYesNo, OutputYesNo}, {onnx.HeadVocabLast, OutputVocabLast}, {onnx.HeadVocabAll, OutputVocabAll}}
	if testing.Short() {
		cases = cases[:1] // -short: the two-row head only
	}
	for _, c := range cases {
		dir := tinyModel(t, c.head, c.head != onnx.HeadYesNo)
		o := DefaultOptions()
		o.RuntimeLib = testenv.ORTLib()
		s, info, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if info.Output != c.kind {
			t.Errorf("%v: detected %v, want %v", c.head, info.Output, c.kind)
		}
		got := scoreAll(t, s, r)
		_ = s.Close()
		for i := range got {
			if math.Abs(got[i].Logit-want[i].Logit) > 1e-4 {
				t.Errorf("%v: doc %d logit %.6f, folded head %.6f", c.head, i, got[i].Logit, want[i].Logit)
			}
		}
	}
}

// TestTruncatedScoring: an over-long document is cut (never the suffix)
// and still scored; the result says it was truncated.
func TestTruncatedScoring(t *testing.T) {
	cfg := rerank.DefaultScorerConfig()
	cfg.Prompt.MaxLength = 128
	s := openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, cfg)
	long := strings.Repeat("a very long memory about many things ", 100)
	got := scoreAll(t, s, rerank.Request{Query: query, Docs: []string{long, "short"}})
	if !got[0].Truncated || got[0].Tokens != 128 || got[1].Truncated {
		t.Errorf("got %+v", got)
	}
	ref := scoreAll(t, openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineReference, cfg), rerank.Request{Query: query, Docs: []string{long}})
	if math.Abs(ref[0].Logit-got[0].Logit) > 1e-4 {
		t.Errorf("truncated prompt: ORT %.6f vs reference %.6f", got[0].Logit, ref[0].Logit)
	}
}

func TestScoreErrors(t *testing.T) {
	s := openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, rerank.DefaultScorerConfig())
	if _, err := s.Score(context.Background(), rerank.Request{Docs: []string{"x"}}); !errors.Is(err, rerank.ErrEmptyQuery) {
		t.Errorf("empty query: %v", err)
	}
	if out, err := s.Score(context.Background(), rerank.Request{Query: "q"}); err != nil || len(out) != 0 {
		t.Errorf("no documents: %v, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Score(ctx, rerank.Request{Query: "q", Docs: []string{"x"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestIncompatibleModels: graphs that break the I/O contract are refused
// with an error naming what was found.
func TestIncompatibleModels(t *testing.T) {
	dir := t.TempDir()
	if err := onnx.BuildMatMulChain(2, 8).Save(dir); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSession(filepath.Join(dir, onnx.ModelFile), SessionSpec{YesID: 9693, NoID: 2152}, DefaultSessionConfig())
	if !errors.Is(err, ErrIncompatibleModel) {
		t.Fatalf("matmul chain: %v, want ErrIncompatibleModel", err)
	}
	for _, want := range []string{`unsupported input "x"`, `missing input "input_ids"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A truncated external data file: a clear error at open, not a crash.
	src := tinyModel(t, onnx.HeadLogit, true)
	broken := t.TempDir()
	for _, f := range []string{onnx.ModelFile, onnx.DataFile, "tokenizer.json", "tokenizer_config.json"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == onnx.DataFile {
			data = data[:len(data)/2]
		}
		if err := os.WriteFile(filepath.Join(broken, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := DefaultOptions()
	o.RuntimeLib = testenv.ORTLib()
	if s, _, err := Open(broken, o); err == nil {
		_ = s.Close()
		t.Error("model with truncated data file opened")
	}
	o.Engine = EngineReference
	if _, _, err := Open(broken, o); err == nil {
		t.Error("reference engine opened a truncated data file")
	}
	// A folder without model.onnx.
	if _, _, err := Open(t.TempDir(), o); err == nil || !strings.Contains(err.Error(), "model.onnx") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestConcurrentScoring(t *testing.T) {
	s := openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineONNX, rerank.DefaultScorerConfig())
	docs := mixedDocs(8)
	want := scoreAll(t, s, rerank.Request{Query: query, Docs: docs})
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			got, err := s.Score(context.Background(), rerank.Request{Query: query, Docs: docs[g : g+1]})
			if err == nil && math.Abs(got[0].Score-want[g].Score) > 1e-6 {
				err = errors.New("concurrent score differs")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestConcurrentReference: the plain-Go engines spread a batch over
// goroutines (one per sequence, or per text for the embedder); under the
// race tier's -race, a short batch gives each sequence what it gets alone.
func TestConcurrentReference(t *testing.T) {
	docs := []string{"a cat", "the support group met on Tuesday", "x", "a sunset over the lake"}
	s := openModel(t, tinyModel(t, onnx.HeadLogit, true), EngineReference, rerank.DefaultScorerConfig())
	batch := scoreAll(t, s, rerank.Request{Query: query, Docs: docs})
	for i, d := range docs {
		alone := scoreAll(t, s, rerank.Request{Query: query, Docs: []string{d}})
		if math.Abs(alone[0].Logit-batch[i].Logit) > 1e-9 {
			t.Errorf("doc %d: logit %g in a batch, %g alone", i, batch[i].Logit, alone[0].Logit)
		}
	}
	e := openEmbedder(t, tinyEmbeddingModel(t, onnx.EmbedHidden, false), EngineReference, DefaultEmbedConfig())
	vecs := embedAll(t, e, docs, false)
	for i, d := range docs {
		if _, diff := compare(t, vecs[i:i+1], embedAll(t, e, []string{d}, false)); diff > 1e-6 {
			t.Errorf("text %d: vector in a batch differs from alone by %.3g", i, diff)
		}
	}
}
