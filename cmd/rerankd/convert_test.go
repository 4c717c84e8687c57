package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/tokenizer"
)

// writeCheckpoint writes seeded random weights of cfg as a float32 Hugging
// Face checkpoint folder with the Qwen3 tokenizer files, and returns it.
func writeCheckpoint(t *testing.T, cfg arch.Config, seed uint64) string {
	t.Helper()
	w, err := arch.Random(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	ckpt := t.TempDir()
	if err := hf.WriteCheckpoint(ckpt, w, "F32", 1); err != nil {
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
	return ckpt
}

// TestConvertUntiedReference: a checkpoint with its own lm_head
// (tie_word_embeddings false) converts, and `score --engine reference`
// scores it (the graph keeps only the folded yes-no head, no lm_head
// initializer) with the ONNX Runtime probabilities, within 1e-5.
func TestConvertUntiedReference(t *testing.T) {
	cfg := arch.Tiny()
	cfg.TieWordEmbeddings = false
	ckpt := writeCheckpoint(t, cfg, 13)
	out := filepath.Join(t.TempDir(), "untied")
	if code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", out, "--quant", "none", "--no-shared-prefix"); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	args := []string{"--model", out, "--query", "What did Caroline do?",
		"--doc", "Caroline went to the support group", "--doc", "Melanie painted a sunset", "--doc", "x"}
	onnxOut := scoreCLI(t, args...)
	refOut := scoreCLI(t, append(args, "--engine", "reference")...)
	for i := range onnxOut.Scores {
		if d := math.Abs(onnxOut.Scores[i] - refOut.Scores[i]); d > 1e-5 {
			t.Errorf("doc %d: onnx %.7f vs reference %.7f (|diff| %.3g > 1e-5)", i, onnxOut.Scores[i], refOut.Scores[i], d)
		}
	}
}
