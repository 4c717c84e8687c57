package model

import (
	"context"
	"fmt"
	"testing"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// tinyModel writes (once per run) a tiny random model with the given head
// and returns its folder, its weights in model.onnx.data when external.
// Tests for which storage is not the point read the external folder: each
// session of an inline one parses the graph's copy of the weights, and
// the tests of inline storage (TestORTMatchesReference,
// TestSharedPrefixMatchesPlain, TestGraphIOMatchesRuntime) name it.
func tinyModel(t testing.TB, head onnx.Head, external bool) string {
	t.Helper()
	return tinyModelOf(t, arch.Tiny(), head, external)
}

// tinyUntied is arch.Tiny with a separate lm_head (tie_word_embeddings
// false), as some fine-tuned checkpoints are saved.
func tinyUntied() arch.Config {
	c := arch.Tiny()
	c.TieWordEmbeddings = false
	return c
}

// tinyModelOf writes (once per run, internal/fixture) a random model of cfg with the
// given head and returns its folder.
func tinyModelOf(t testing.TB, cfg arch.Config, head onnx.Head, external bool) string {
	t.Helper()
	return fixture.Model(t, cfg, 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), Head: head, ForceExternal: external})
}

func openModel(t testing.TB, dir string, engine EngineKind, cfg rerank.ScorerConfig) *rerank.Scorer {
	t.Helper()
	o := DefaultOptions()
	o.Engine, o.RuntimeLib, o.Scorer = engine, testenv.ORTLib(), cfg
	o.Session.IntraOpThreads = 2
	s, _, err := Open(dir, o)
	if err != nil {
		t.Fatalf("open %s (%s): %v", dir, engine, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mixedDocs returns n documents of very different lengths.
func mixedDocs(n int) []string {
	words := []string{"Caroline", "went", "to", "the", "support", "group", "yesterday", "and", "felt", "empowered",
		"Melanie", "painted", "a", "sunset", "over", "lake", "camping", "kids", "loved", "it", "2023", "May", "7"}
	docs := make([]string, n)
	for i := range docs {
		k := 1 + (i*37)%90 // 1..90 words
		s := ""
		for j := range k {
			s += words[(i*7+j*3)%len(words)] + " "
		}
		docs[i] = fmt.Sprintf("Turn %d: %s", i, s)
	}
	return docs
}

func scoreAll(t testing.TB, s *rerank.Scorer, r rerank.Request) []rerank.Score {
	t.Helper()
	out, err := s.Score(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
