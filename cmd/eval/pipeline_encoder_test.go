package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/tokenizer"
)

// encoderFolder converts a generated tiny encoder of family (an embedding
// model when embed) with a tokenizer from package tokenizer's test files,
// its vocabulary grown to the tokenizer's.
func encoderFolder(t *testing.T, family string, embed bool, tokFile string, seed uint64) string {
	t.Helper()
	src := filepath.Join("..", "..", "tokenizer", "testdata", filepath.FromSlash(tokFile))
	tok, err := tokenizer.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	cfg := arch.TinyEncoder(family, embed)
	cfg.VocabSize = max(cfg.VocabSize, tok.VocabSize())
	pool := arch.Pooling{Mode: arch.PoolCLS, Normalize: true}
	ckpt, out := filepath.Join(t.TempDir(), "ckpt"), filepath.Join(t.TempDir(), "model")
	if err := folder.WriteTestEncoderCheckpoint(ckpt, cfg, seed, "F32", pool); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ckpt, tokenizer.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := folder.Convert(ckpt, out, folder.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLocomoEncoderPipelines: eval locomo's hybrid pipeline with a BGE-M3
// layout embedding model (XLM-R, CLS pooling, L2-normalised) and a BERT
// cross-encoder reranker, end to end on the fixtures. Random weights: a
// code-path test, the metrics are not checked.
func TestLocomoEncoderPipelines(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	emb := encoderFolder(t, arch.FamilyXLMR, true, "unigram/xlmr-current.json", 3)
	rr := encoderFolder(t, arch.FamilyBERT, false, "wordpiece/bert-uncased.json", 4)
	for _, p := range []string{"dense", "hybrid+rerank"} {
		t.Run(p, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"locomo", "--data", fixtures, "--json", "--pipeline", p, "--embed-model", emb, "--model", rr,
				"--ort-lib", testenv.ORTLib(), "--rerank-depth", "5"}, &out, &errb)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var res struct {
				Pipeline string
				Summary  map[string]float64
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Pipeline != p || res.Summary["queries"] < 1 {
				t.Fatalf("result %s: %v", out.String(), err)
			}
		})
	}
}
