package hf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

func TestEncoderCheckpointRoundTrip(t *testing.T) {
	cases := []struct {
		family string
		embed  bool
		dtype  string
		rel    float64
	}{
		{arch.FamilyXLMR, false, "F32", 0},
		{arch.FamilyBERT, false, "BF16", 1.0 / 256},
		{arch.FamilyXLMR, true, "BF16", 1.0 / 256}, // F16 (subnormals: not relative) is scored in package model
		{arch.FamilyBERT, true, "F32", 0},
	}
	for _, c := range cases {
		cfg := arch.TinyEncoder(c.family, c.embed)
		t.Run(cfg.Architectures[0]+"-"+c.dtype, func(t *testing.T) {
			w, err := arch.RandomEncoder(cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := WriteEncoderCheckpoint(dir, w, c.dtype); err != nil {
				t.Fatal(err)
			}
			f, err := OpenSafetensors(filepath.Join(dir, SingleWeights))
			if err != nil {
				t.Fatal(err)
			}
			_, prefixed := f.Tensors[cfg.CheckpointPrefix()+arch.EncWordEmbeddings]
			_ = f.Close()
			if prefixed != cfg.Classifier() {
				t.Errorf("prefixed names %v, want %v (classifiers save the encoder under %q)", prefixed, cfg.Classifier(), cfg.CheckpointPrefix())
			}
			got, warns, err := LoadEncoder(dir)
			if err != nil || len(warns) > 0 {
				t.Fatalf("load: %v (warnings %v)", err, warns)
			}
			for name := range cfg.Shapes() {
				assertTensor(t, name, got.Tensors[name], w.Tensors[name], c.rel)
			}
		})
	}
}

// TestLoadEncoderLegacyNames: LayerNorm.gamma/beta (old BERT checkpoints)
// load as weight/bias.
func TestLoadEncoderLegacyNames(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, true)
	w, err := arch.RandomEncoder(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteEncoderCheckpoint(dir, w, "F32"); err != nil {
		t.Fatal(err)
	}
	renamed := map[string]*arch.Tensor{}
	for n, x := range w.Tensors {
		n = strings.Replace(n, "LayerNorm.weight", "LayerNorm.gamma", 1)
		renamed[strings.Replace(n, "LayerNorm.bias", "LayerNorm.beta", 1)] = x
	}
	if err := SaveSafetensors(filepath.Join(dir, SingleWeights), renamed, F32, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadEncoder(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertTensor(t, arch.EncEmbedNormBias, got.Tensors[arch.EncEmbedNormBias], w.Tensors[arch.EncEmbedNormBias], 0)
}

func TestLoadEncoderRefuses(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyXLMR, false)
	w, err := arch.RandomEncoder(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(dir string) error
		want []string
	}{
		{"pickle only", func(dir string) error {
			if err := os.Remove(filepath.Join(dir, SingleWeights)); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, PickleWeights), []byte("not read"), 0o644)
		}, []string{PickleWeights, "safetensors"}},
		{"missing head", func(dir string) error {
			t := map[string]*arch.Tensor{}
			for n, x := range w.Tensors {
				if n != arch.EncHeadOutWeight {
					t[cfg.CheckpointPrefix()+n] = x
				}
			}
			return SaveSafetensors(filepath.Join(dir, SingleWeights), t, F32, nil)
		}, []string{"missing tensor " + arch.EncHeadOutWeight}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteEncoderCheckpoint(dir, w, "F32"); err != nil {
				t.Fatal(err)
			}
			if err := c.edit(dir); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadEncoder(dir)
			for _, s := range c.want {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("err %v, want it to mention %q", err, s)
				}
			}
		})
	}
}
