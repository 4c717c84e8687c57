package model

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/tokenizer"
)

// TestEmbedStopsOnContext: the request's context reaches the embedding
// models' tokenization, as it reaches the rerankers'. A huge text under a
// done context ends EmbedWith and TokensWith with the context's error
// instead of being tokenized whole, for a Qwen3-Embedding folder (BPE)
// and an encoder folder (its WordPiece tokenizer); a live context gives
// the plain call's ids.
func TestEmbedStopsOnContext(t *testing.T) {
	huge := strings.Repeat("garden river stone ", 20_000)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	qo := DefaultEmbedderOptions()
	qo.Engine = EngineReference
	qwen, err := OpenEmbedder(tinyEmbeddingModel(t, onnx.EmbedHidden, false), qo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = qwen.Close() })

	cfg := arch.TinyEncoder(arch.FamilyBERT, true)
	eo := DefaultEmbedderOptions()
	eo.Engine, eo.EncoderTokenizer = EngineReference, fakeEncoderTokenizer(cfg.Family(), cfg.VocabSize)
	bert, err := OpenEmbedder(convertedEncoderEmbedding(t, cfg, arch.Pooling{Mode: arch.PoolCLS, Normalize: true}), eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bert.Close() })
	wp, err := tokenizer.Load(filepath.Join("..", "tokenizer", "testdata", "wordpiece", "bert-uncased.json"))
	if err != nil {
		t.Fatal(err)
	}
	bert.enc = tokenizerEncoder{t: wp, plainSpecial: true} // tokenizing only: no ids reach the engine

	for _, c := range []struct {
		name string
		e    *Embedder
	}{{"qwen3-embedding (BPE)", qwen}, {"encoder (WordPiece)", bert}} {
		t.Run(c.name, func(t *testing.T) {
			// Stopped in the tokenizer (its error names it), not only at the
			// check before the first engine call.
			if _, err := c.e.EmbedWith(cancelled, []string{"short", huge}, embed.Options{}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "tokenize") {
				t.Errorf("EmbedWith under a cancelled context: %v, want context.Canceled from the tokenizer", err)
			}
			for _, o := range []embed.Options{{}, {CutStart: true}} {
				if _, _, err := c.e.TokensWith(cancelled, huge, o); !errors.Is(err, context.Canceled) {
					t.Errorf("TokensWith %+v under a cancelled context: %v, want context.Canceled", o, err)
				}
			}
			live, cut, err := c.e.TokensWith(context.Background(), huge, embed.Options{})
			plain, plainCut := c.e.Tokens(huge, false)
			if err != nil || !cut || len(live) != len(plain) || cut != plainCut {
				t.Errorf("live context: %d ids (cut %v, %v), plain call %d ids (cut %v)", len(live), cut, err, len(plain), plainCut)
			}
		})
	}
}
