package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/ref"
)

// writeQwen3ModelCheckpoint writes a Qwen3-Embedding-style checkpoint:
// architectures Qwen3Model, names without "model.", no lm_head although
// tie_word_embeddings is false (as in the 8B release).
func writeQwen3ModelCheckpoint(t *testing.T, dir string, archs []string) *arch.Weights {
	t.Helper()
	cfg := arch.Tiny() // real vocabulary, narrow: 2.4M parameters
	cfg.HiddenSize, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim, cfg.IntermediateSize = 16, 2, 1, 8, 32
	cfg.Architectures, cfg.TieWordEmbeddings = archs, false
	w, err := arch.Random(cfg.Backbone(), 21)
	if err != nil {
		t.Fatal(err)
	}
	tensors := map[string]*arch.Tensor{}
	for name, tensor := range w.Tensors {
		tensors[strings.TrimPrefix(name, "model.")] = tensor
	}
	if err := arch.WriteConfig(filepath.Join(dir, hf.ConfigFile), cfg); err != nil {
		t.Fatal(err)
	}
	if err := hf.SaveSafetensors(filepath.Join(dir, hf.SingleWeights), tensors, hf.F32, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestConvertEmbeddingCheckpoint: Convert detects a Qwen3Model checkpoint,
// writes the embedding folder, and ONNX Runtime reproduces ref.Embedding
// on the checkpoint's own weights.
func TestConvertEmbeddingCheckpoint(t *testing.T) {
	src, out := t.TempDir(), filepath.Join(t.TempDir(), "converted")
	w := writeQwen3ModelCheckpoint(t, src, []string{arch.ArchModel})
	if kind, why, err := folder.DetectKind(src); err != nil || kind != folder.KindEmbedding || !strings.Contains(why, "Qwen3Model") {
		t.Fatalf("DetectKind = %v (%s), %v", kind, why, err)
	}
	if err := folder.Convert(src, out, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()}); err != nil {
		t.Fatal(err)
	}
	cfg, err := arch.ReadConfig(filepath.Join(out, "config.json"))
	if err != nil || cfg.TieWordEmbeddings || !cfg.HasArchitecture(arch.ArchModel) {
		t.Errorf("converted config.json %+v, %v: want the source's", cfg, err)
	}
	texts := []string{"Caroline went to the support group.", "Melanie painted a sunset over the lake last summer."}
	e := openEmbedder(t, out, EngineONNX, DefaultEmbedConfig())
	ortV := embedAll(t, e, texts, false)
	for i, text := range texts {
		ids, _ := e.Tokens(text, false)
		want, err := ref.Embedding(w, ids)
		if err != nil {
			t.Fatal(err)
		}
		if minCos, diff := compare(t, ortV[i:i+1], [][]float32{want}); diff > 1e-4 || minCos < 0.9999 {
			t.Errorf("text %d: ORT differs from the checkpoint by %.3g (cosine %.7f)", i, diff, minCos)
		}
	}
}

// TestDetectKind: what marks a checkpoint as an embedding model.
func TestDetectKind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		archs []string
		extra string // a file created in the folder
		want  folder.ModelKind
	}{
		{"Qwen3Model", []string{arch.ArchModel}, "", folder.KindEmbedding},
		{"causal LM with sentence-transformers modules", []string{arch.ArchCausalLM}, folder.STModulesFile, folder.KindEmbedding},
		{"causal LM with a pooling config", []string{arch.ArchCausalLM}, folder.STPoolingFile, folder.KindEmbedding},
		{"causal LM alone", []string{arch.ArchCausalLM}, "", folder.KindReranker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := arch.Tiny()
			cfg.Architectures = tc.archs
			if err := arch.WriteConfig(filepath.Join(dir, hf.ConfigFile), cfg); err != nil {
				t.Fatal(err)
			}
			if tc.extra != "" {
				p := filepath.Join(dir, filepath.FromSlash(tc.extra))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got, why, err := folder.DetectKind(dir); err != nil || got != tc.want {
				t.Errorf("DetectKind = %v (%s), %v; want %v", got, why, err, tc.want)
			}
		})
	}
	if _, _, err := folder.DetectKind(t.TempDir()); err == nil {
		t.Error("DetectKind of an empty folder succeeded")
	}
}
