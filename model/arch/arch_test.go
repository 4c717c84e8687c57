package arch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidateReportsAll(t *testing.T) {
	c := Config{ModelType: "llama", NumAttentionHeads: 6, NumKeyValueHeads: 4, HeadDim: 3}
	err := c.Validate()
	for _, want := range []string{"hidden_size", "num_hidden_layers", "intermediate_size", "vocab_size", "multiple", "even", "rms_norm_eps", "rope_theta", "llama"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
	for _, ok := range []Config{Qwen3Reranker06B(), Tiny()} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

func TestReadConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		json       string
		headDim    int
		kvHeads    int
		wantErrSub string
	}{
		{`{"model_type":"qwen3","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,"intermediate_size":8,"rms_norm_eps":1e-6,"rope_theta":10000,"vocab_size":10}`, 32, 2, ""},
		{`{"model_type":"qwen3","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"intermediate_size":8,"rms_norm_eps":1e-6,"rope_theta":10000,"vocab_size":10}`, 16, 4, ""},
		{`{"hidden_size": "big"}`, 0, 0, "config"},
		{`{}`, 0, 0, "hidden_size"},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "config.json")
		if err := os.WriteFile(p, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadConfig(p)
		if c.wantErrSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSub) {
				t.Errorf("case %d: err %v, want %q", i, err, c.wantErrSub)
			}
			continue
		}
		if err != nil || got.HeadDim != c.headDim || got.NumKeyValueHeads != c.kvHeads {
			t.Errorf("case %d: %+v, %v", i, got, err)
		}
	}
	if _, err := ReadConfig(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: want error")
	}
}

// TestParams: Qwen3-0.6B is published as 0.6B parameters, 0.44B of them
// outside the embedding.
func TestParams(t *testing.T) {
	c := Qwen3Reranker06B()
	total := c.Params()
	nonEmb := total - int64(c.VocabSize*c.HiddenSize)
	if total < 590e6 || total > 600e6 || nonEmb < 435e6 || nonEmb > 445e6 {
		t.Errorf("params %d, non-embedding %d", total, nonEmb)
	}
	// FLOPs per token = 2 x non-embedding matrix parameters (norms excluded).
	if f := c.FLOPsPerToken(); f < 2*435e6 || f > 2*445e6 {
		t.Errorf("FLOPs/token %g", f)
	}
	// q 1024x2048 + o 2048x1024 + MLP 3x1024x3072 multiply-adds: 13/15 of
	// one of 28 layers.
	if f, want := c.LastLayerSkipFLOPs(), 2*(2*1024*2048+3*1024*3072.0); f != want {
		t.Errorf("last-layer skip FLOPs %g, want %g", f, want)
	}
}

func TestRandomDeterministic(t *testing.T) {
	c := Tiny()
	c.VocabSize = 300
	a, err := Random(c, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Random(c, 5)
	d, _ := Random(c, 6)
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	name := LayerTensor(1, QProj)
	if !slices.Equal(a.Tensors[name].Data, b.Tensors[name].Data) {
		t.Error("same seed gave different weights")
	}
	if slices.Equal(a.Tensors[name].Data, d.Tensors[name].Data) {
		t.Error("different seeds gave the same weights")
	}
	delete(a.Tensors, FinalNorm)
	a.Tensors[EmbedTokens].Shape = []int{1, 1}
	err = a.Check()
	if err == nil || !strings.Contains(err.Error(), FinalNorm) || !strings.Contains(err.Error(), EmbedTokens) {
		t.Errorf("Check() = %v, want both problems", err)
	}
}

func TestHeadDiff(t *testing.T) {
	c := Tiny()
	c.VocabSize = 10
	w, _ := Random(c, 1)
	d, err := w.HeadDiff(3, 7)
	if err != nil {
		t.Fatal(err)
	}
	e := w.Tensors[EmbedTokens]
	h := c.HiddenSize
	for i := range d {
		if d[i] != e.Data[3*h+i]-e.Data[7*h+i] {
			t.Fatalf("HeadDiff[%d] wrong", i)
		}
	}
	if _, err := w.HeadDiff(10, 0); err == nil {
		t.Error("id out of range: want error")
	}
}

// TestCheckBackbone: untied weights without lm_head fail Check (naming it)
// but pass CheckBackbone, which a forward pass to hidden states needs.
func TestCheckBackbone(t *testing.T) {
	c := Tiny()
	c.VocabSize, c.TieWordEmbeddings = 50, false
	w, err := Random(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	delete(w.Tensors, LMHead)
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), LMHead) {
		t.Errorf("Check() = %v, want missing %s", err, LMHead)
	}
	if err := w.CheckBackbone(); err != nil {
		t.Errorf("CheckBackbone() = %v", err)
	}
	delete(w.Tensors, FinalNorm)
	if err := w.CheckBackbone(); err == nil || !strings.Contains(err.Error(), FinalNorm) {
		t.Errorf("CheckBackbone() = %v, want missing %s", err, FinalNorm)
	}
}
