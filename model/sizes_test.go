package model

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/rerank"
)

// tinyOf shrinks c to 2 layers keeping its head ratio (query heads per kv
// head), whether the attention width differs from the hidden size, and
// its tying: the shape facts that distinguish Qwen3-Reranker-4B and -8B.
func tinyOf(c arch.Config, hidden int) arch.Config {
	t := c
	ratio := c.NumAttentionHeads / c.NumKeyValueHeads
	t.NumHiddenLayers, t.NumKeyValueHeads, t.HeadDim = 2, 2, 8
	t.NumAttentionHeads = 2 * ratio
	t.HiddenSize = hidden
	if c.NumAttentionHeads*c.HeadDim == c.HiddenSize {
		t.HiddenSize = t.NumAttentionHeads * t.HeadDim
	}
	t.IntermediateSize = 3 * t.HiddenSize
	return t
}

// TestLargerSizesConvertScore: checkpoints with the 4B's (4 query heads
// per kv head, attention wider than the stream, tied) and the 8B's (4 per
// kv head, attention as wide as the stream, untied lm_head) proportions
// convert and score on ONNX Runtime within 1e-4 of the reference pass.
func TestLargerSizesConvertScore(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   arch.Config
		dtype string
	}{
		{"4B ratios bf16", tinyOf(arch.Qwen3Reranker4B(), 40), "BF16"},
		{"8B ratios fp16", tinyOf(arch.Qwen3Reranker8B(), 0), "F16"},
		{"8B ratios fp32", tinyOf(arch.Qwen3Reranker8B(), 0), "F32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			full := arch.Qwen3Reranker4B()
			if c.cfg.TieWordEmbeddings {
				if !full.TieWordEmbeddings || c.cfg.NumAttentionHeads*c.cfg.HeadDim <= c.cfg.HiddenSize {
					t.Fatalf("tiny 4B %+v lost the 4B's shape", c.cfg)
				}
			} else if c.cfg.NumAttentionHeads*c.cfg.HeadDim != c.cfg.HiddenSize || c.cfg.NumAttentionHeads/c.cfg.NumKeyValueHeads != 4 {
				t.Fatalf("tiny 8B %+v lost the 8B's shape", c.cfg)
			}
			w, err := arch.Random(c.cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			if err := hf.WriteCheckpoint(src, w, c.dtype, 2); err != nil {
				t.Fatal(err)
			}
			// Weights external, as the 4B's and 8B's are.
			if err := folder.Convert(src, out, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), ForceExternal: true}); err != nil {
				t.Fatal(err)
			}
			loaded, err := hf.LoadCheckpoint(src)
			if err != nil {
				t.Fatal(err)
			}
			yes, no, _, err := specialIDs(tokentest.Qwen(t), rerank.Qwen3RerankerTemplate())
			if err != nil {
				t.Fatal(err)
			}
			head, err := loaded.HeadDiff(yes, no)
			if err != nil {
				t.Fatal(err)
			}
			s := openModel(t, out, EngineONNX, rerank.DefaultScorerConfig())
			r := rerank.Request{Query: "Where did Caroline go?", Docs: mixedDocs(3)}
			prompts, err := s.Prompts(r)
			if err != nil {
				t.Fatal(err)
			}
			got := scoreAll(t, s, r)
			for j, p := range prompts {
				want, err := ref.Logit(loaded, head, p.IDs)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got[j].Logit-float64(want)) > 1e-4 {
					t.Errorf("doc %d: ORT logit %.6f, reference %.6f", j, got[j].Logit, want)
				}
			}
		})
	}
}
