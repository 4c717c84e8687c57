package model

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/tokenizer"
)

func convertedEncoderEmbedding(t *testing.T, cfg arch.EncoderConfig, p arch.Pooling) string {
	t.Helper()
	src, out := t.TempDir(), t.TempDir()
	if err := folder.WriteTestEncoderCheckpoint(src, cfg, 5, "F32", p); err != nil {
		t.Fatal(err)
	}
	if err := folder.Convert(src, out, folder.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenEncoderEmbedder: a converted BGE-M3-style (XLM-R, CLS) or
// sentence-transformers BERT (mean) folder opens as an Embedder: ORT's
// vectors equal the reference engine's within 1e-5 per component, are unit
// length, have the hidden size, and are the pooling of the tokenizer's ids.
func TestOpenEncoderEmbedder(t *testing.T) {
	texts := []string{"alice met bob", "x", strings.Repeat("long text ", 80), "a memory about june"}
	for _, tc := range []struct {
		family string
		pool   arch.Pooling
	}{
		{arch.FamilyXLMR, arch.Pooling{Mode: arch.PoolCLS, Normalize: true}},
		{arch.FamilyBERT, arch.Pooling{Mode: arch.PoolMean, Normalize: true}},
		{arch.FamilyBERT, arch.Pooling{Mode: arch.PoolMax}},
	} {
		t.Run(tc.family+"/"+string(tc.pool.Mode), func(t *testing.T) {
			cfg := arch.TinyEncoder(tc.family, true)
			dir := convertedEncoderEmbedding(t, cfg, tc.pool)
			tok := fakeEncoderTokenizer(tc.family, cfg.VocabSize)
			open := func(engine EngineKind) *Embedder {
				o := DefaultEmbedderOptions()
				o.Engine, o.RuntimeLib, o.EncoderTokenizer = engine, testenv.ORTLib(), tok
				e, err := OpenEmbedder(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = e.Close() })
				return e
			}
			ortE, refE := open(EngineONNX), open(EngineReference)
			if ortE.Dim() != cfg.HiddenSize {
				t.Fatalf("dim %d, want hidden size %d", ortE.Dim(), cfg.HiddenSize)
			}
			got, err := ortE.Embed(context.Background(), texts, false)
			if err != nil {
				t.Fatal(err)
			}
			want, err := refE.Embed(context.Background(), texts, true)
			if err != nil {
				t.Fatal(err)
			}
			for i := range texts {
				var ss float64
				for j := range got[i] {
					ss += float64(got[i][j]) * float64(got[i][j])
					if d := math.Abs(float64(got[i][j] - want[i][j])); d > 1e-5 {
						t.Fatalf("text %d component %d: onnx %v, reference %v", i, j, got[i][j], want[i][j])
					}
				}
				if math.Abs(ss-1) > 1e-5 {
					t.Errorf("text %d: |v|^2 = %v", i, ss)
				}
			}
			ids, cut, err := tok.Encode(context.Background(), texts[2], cfg.MaxTokens())
			if err != nil || !cut {
				t.Fatalf("long text: cut %v, %v", cut, err)
			}
			if toks, tcut := ortE.Tokens(texts[2], false); len(toks) != len(ids) || !tcut {
				t.Errorf("Tokens: %d ids (cut %v), want the tokenizer's %d cut at the model's positions", len(toks), tcut, len(ids))
			}
			ref := refE.engine.(*encoderEmbedEngine).e.(*EncoderReference)
			direct, err := ref.Embed(context.Background(), []Encoded{{IDs: ids}}, tc.pool)
			if err != nil {
				t.Fatal(err)
			}
			var dot float64
			for j := range direct[0] {
				dot += float64(direct[0][j]) * float64(want[2][j])
			}
			if n := norm(direct[0]); math.Abs(dot/n-1) > 1e-5 {
				t.Errorf("text 2: cosine with the direct pooling %v", dot/n)
			}
			if d := math.Abs(float64(got[0][0] - got[1][0])); d == 0 && got[0][1] == got[1][1] {
				t.Error("two texts give the same vector: the text does not reach the model")
			}
		})
	}
}

// TestOpenEncoderEmbedderRefuses: a cross-encoder is not an embedding
// model, an instruction has nowhere to go, and a BPE tokenizer is never
// used for an encoder.
func TestOpenEncoderEmbedderRefuses(t *testing.T) {
	reranker := convertedEncoder(t, arch.TinyEncoder(arch.FamilyBERT, false))
	embed := convertedEncoderEmbedding(t, arch.TinyEncoder(arch.FamilyBERT, true), arch.Pooling{Mode: arch.PoolMean})
	fake := fakeEncoderTokenizer(arch.FamilyBERT, 100)
	for _, tc := range []struct {
		name, dir, instruction string
		tok                    EncoderTokenizer
		want                   string
	}{
		{"a reranker", reranker, "", fake, "serve it with --model"},
		{"an instruction", embed, "Given a question", fake, "no instruction format"},
		{"the Qwen fallback tokenizer", embed, "", nil, "needs its own tokenizer.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultEmbedderOptions()
			o.RuntimeLib, o.Tokenizer, o.EncoderTokenizer = testenv.ORTLib(), testenv.TokenizerDir(), tc.tok
			o.Embed.Instruction = tc.instruction
			_, err := OpenEmbedder(tc.dir, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestOpenEncoderEmbedderOwnTokenizer: a bare XLM-R folder with its own
// Unigram tokenizer.json embeds through it, ORT within 1e-5 of the
// reference per component.
func TestOpenEncoderEmbedderOwnTokenizer(t *testing.T) {
	src := filepath.Join("..", "tokenizer", "testdata", "unigram", "xlmr-roberta.json")
	tok, err := tokenizer.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	cfg := arch.TinyEncoder(arch.FamilyXLMR, true)
	cfg.VocabSize = tok.VocabSize()
	dir := convertedEncoderEmbedding(t, cfg, arch.Pooling{Mode: arch.PoolCLS, Normalize: true})
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tokenizer.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	texts := []string{"Alice adopted a cat.", "Bob moved to Berlin in June."}
	var vecs [2][][]float32
	for k, engine := range []EngineKind{EngineONNX, EngineReference} {
		o := DefaultEmbedderOptions()
		o.Engine, o.RuntimeLib = engine, testenv.ORTLib()
		e, err := OpenEmbedder(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close() //nolint:errcheck // test
		if vecs[k], err = e.Embed(context.Background(), texts, true); err != nil {
			t.Fatal(err)
		}
		if ids, _ := e.Tokens(texts[0], false); ids[0] != 0 || ids[len(ids)-1] != 2 {
			t.Errorf("ids %v: want <s> ... </s> from the post-processor", ids)
		}
	}
	for i := range texts {
		for j := range vecs[0][i] {
			if d := math.Abs(float64(vecs[0][i][j] - vecs[1][i][j])); d > 1e-5 {
				t.Fatalf("text %d component %d: onnx %v, reference %v", i, j, vecs[0][i][j], vecs[1][i][j])
			}
		}
	}
}
