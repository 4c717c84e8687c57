package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// tinyConfig keeps checkpoint files a few hundred kilobytes.
func tinyConfig(tied bool) arch.Config {
	return arch.Config{
		Architectures: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3",
		HiddenSize: 32, NumHiddenLayers: 2, NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8,
		IntermediateSize: 64, RMSNormEps: 1e-6, RopeTheta: 1e6, VocabSize: 300, TieWordEmbeddings: tied,
	}
}

func randomWeights(t *testing.T, tied bool, seed uint64) *arch.Weights {
	t.Helper()
	w, err := arch.Random(tinyConfig(tied), seed)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// assertWeights compares every expected tensor within rel.
func assertWeights(t *testing.T, got, want *arch.Weights, rel float64) {
	t.Helper()
	if got.Config.HiddenSize != want.Config.HiddenSize || got.Config.TieWordEmbeddings != want.Config.TieWordEmbeddings {
		t.Fatalf("config %+v, want %+v", got.Config, want.Config)
	}
	for name := range want.Config.Shapes() {
		g, ok := got.Tensors[name]
		if !ok {
			t.Fatalf("tensor %s not loaded", name)
		}
		assertTensor(t, name, g, want.Tensors[name], rel)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		tied   bool
		dtype  string
		shards int
		rel    float64
	}{
		{"tied f32 single", true, "F32", 1, 0},
		{"tied bf16 single", true, "bfloat16", 1, 1.0 / 256},
		{"untied f32 sharded", false, "float32", 3, 0},
		{"untied bf16 one tensor per shard", false, "BF16", 25, 1.0 / 256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := randomWeights(t, tt.tied, 7)
			dir := t.TempDir()
			if err := WriteCheckpoint(dir, w, tt.dtype, tt.shards); err != nil {
				t.Fatal(err)
			}
			if tt.shards > 1 {
				idx, err := ReadIndex(filepath.Join(dir, WeightsIndex))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(idx.Shards()); got != tt.shards {
					t.Errorf("%d shards, want %d", got, tt.shards)
				}
			}
			got, err := LoadCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			assertWeights(t, got, w, tt.rel)
			if _, ok := got.Tensors[arch.LMHead]; ok == tt.tied {
				t.Errorf("lm_head loaded = %v with tie_word_embeddings = %v", ok, tt.tied)
			}
		})
	}
}

// TestCheckpointExtras: rotary caches and an lm_head in a tied checkpoint
// are ignored; tensors saved without "model." (a bare Qwen3Model) load.
func TestCheckpointExtras(t *testing.T) {
	w := randomWeights(t, true, 3)
	tensors := map[string]*arch.Tensor{
		arch.LMHead: w.Tensors[arch.EmbedTokens],
		"model.layers.0.self_attn.rotary_emb.inv_freq": {Shape: []int{4}, Data: []float32{1, 2, 3, 4}},
	}
	for name, tensor := range w.Tensors {
		tensors[strings.TrimPrefix(name, "model.")] = tensor
	}
	dir := t.TempDir()
	if err := arch.WriteConfig(filepath.Join(dir, ConfigFile), w.Config); err != nil {
		t.Fatal(err)
	}
	if err := SaveSafetensors(filepath.Join(dir, SingleWeights), tensors, F32, nil); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertWeights(t, got, w, 0)
	if len(got.Tensors) != len(w.Tensors) {
		t.Errorf("loaded %d tensors, want %d (extras skipped)", len(got.Tensors), len(w.Tensors))
	}
}

func TestCheckpointErrors(t *testing.T) {
	q0 := arch.LayerTensor(0, arch.QProj)
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"no config", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, ConfigFile)) }, []string{"config"}},
		{"no weights", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, WeightsIndex))
		}, []string{"neither model.safetensors nor model.safetensors.index.json"}},
		{"missing shard", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
		}, []string{"model-00002-of-00002.safetensors", "no such file"}},
		{"tensor not in its shard", func(t *testing.T, dir string) {
			editIndex(t, dir, func(idx *Index) { idx.WeightMap["model.norm.weight"] = "model-00001-of-00002.safetensors" })
		}, []string{"maps tensor model.norm.weight to", "model-00001-of-00002.safetensors, which does not contain it"}},
		{"unsafe shard path", func(t *testing.T, dir string) {
			editIndex(t, dir, func(idx *Index) { idx.WeightMap["model.norm.weight"] = "../x.safetensors" })
		}, []string{"unsafe path"}},
		{"missing and misshapen tensors", func(t *testing.T, dir string) {
			w := randomWeights(t, false, 1)
			delete(w.Tensors, arch.FinalNorm)
			w.Tensors[q0] = &arch.Tensor{Shape: []int{2, 2}, Data: make([]float32, 4)}
			os.Remove(filepath.Join(dir, WeightsIndex))
			if err := SaveSafetensors(filepath.Join(dir, SingleWeights), w.Tensors, F32, nil); err != nil {
				t.Fatal(err)
			}
		}, []string{"missing tensor model.norm.weight", "model.safetensors: tensor " + q0 + " has shape [2 2], want [32 32]"}},
		{"corrupt shard", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), []byte("garbage!garbage"), 0o644)
		}, []string{"model-00001-of-00002.safetensors", "header length"}},
		{"integer tensor", func(t *testing.T, dir string) {
			w := randomWeights(t, false, 1)
			os.Remove(filepath.Join(dir, WeightsIndex))
			writeWithIntNorm(t, filepath.Join(dir, SingleWeights), w)
		}, []string{`"model.norm.weight" has dtype I32`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteCheckpoint(dir, randomWeights(t, false, 1), "F32", 2); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, dir)
			_, err := LoadCheckpoint(dir)
			if err == nil {
				t.Fatal("loaded a broken checkpoint")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not mention %q", err, want)
				}
			}
		})
	}
}

func editIndex(t *testing.T, dir string, edit func(*Index)) {
	t.Helper()
	idx, err := ReadIndex(filepath.Join(dir, WeightsIndex))
	if err != nil {
		t.Fatal(err)
	}
	edit(idx)
	data, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(dir, WeightsIndex), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeWithIntNorm writes w with model.norm.weight stored as I32 (same
// byte size as F32), which cannot load as float weights.
func writeWithIntNorm(t *testing.T, path string, w *arch.Weights) {
	t.Helper()
	if err := SaveSafetensors(path, w.Tensors, F32, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The header is JSON; swap the dtype of that one entry in place.
	key := `"model.norm.weight":{"dtype":"F32"`
	data = []byte(strings.Replace(string(data), key, `"model.norm.weight":{"dtype":"I32"`, 1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteCheckpointErrors(t *testing.T) {
	w := randomWeights(t, true, 1)
	tests := []struct {
		name   string
		w      *arch.Weights
		dtype  string
		shards int
		want   string
	}{
		{"dtype", w, "I8", 1, "want F32, BF16 or F16"},
		{"zero shards", w, "F32", 0, "shards = 0"},
		{"too many shards", w, "F32", 1000, "shards = 1000"},
		{"nil", nil, "F32", 1, "nil weights"},
		{"invalid weights", &arch.Weights{Config: w.Config, Tensors: map[string]*arch.Tensor{}}, "F32", 1, "missing tensor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteCheckpoint(t.TempDir(), tt.w, tt.dtype, tt.shards)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWriteCheckpointRelayout: rewriting a folder in the other layout
// removes the stale weights file that LoadCheckpoint would otherwise pick.
func TestWriteCheckpointRelayout(t *testing.T) {
	dir := t.TempDir()
	a, b := randomWeights(t, true, 1), randomWeights(t, true, 2)
	for _, step := range []struct {
		w      *arch.Weights
		shards int
	}{{a, 1}, {b, 2}, {a, 1}} {
		if err := WriteCheckpoint(dir, step.w, "F32", step.shards); err != nil {
			t.Fatal(err)
		}
		got, err := LoadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		assertWeights(t, got, step.w, 0)
	}
}
