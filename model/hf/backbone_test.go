package hf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// TestLoadBackbone: a Qwen3Model checkpoint (bare names, untied config, no
// lm_head) loads as a backbone, where LoadCheckpoint needs the head.
func TestLoadBackbone(t *testing.T) {
	cfg := tinyConfig(false)
	cfg.Architectures = []string{arch.ArchModel}
	w, err := arch.Random(cfg.Backbone(), 5)
	if err != nil {
		t.Fatal(err)
	}
	tensors := map[string]*arch.Tensor{}
	for name, tensor := range w.Tensors {
		tensors[strings.TrimPrefix(name, "model.")] = tensor
	}
	dir := t.TempDir()
	if err := arch.WriteConfig(filepath.Join(dir, ConfigFile), cfg); err != nil {
		t.Fatal(err)
	}
	if err := SaveSafetensors(filepath.Join(dir, SingleWeights), tensors, F32, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), arch.LMHead) {
		t.Errorf("LoadCheckpoint without lm_head: %v, want it to name %s", err, arch.LMHead)
	}
	got, err := LoadBackbone(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertWeights(t, got, w, 0)
	if _, ok := got.Tensors[arch.LMHead]; ok || len(got.Tensors) != len(w.Tensors) {
		t.Errorf("loaded %d tensors (lm_head %v), want %d", len(got.Tensors), ok, len(w.Tensors))
	}
}
