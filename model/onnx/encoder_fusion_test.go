package onnx

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// TestEncoderFusionGraphs: every encoder form passes Check, writes exactly
// the contrib kernels its fusions name (BiasGelu for an erf model, FastGelu
// for a tanh one, none for relu), records the set in its metadata, and
// (float32) reads back the weights it was built from.
func TestEncoderFusionGraphs(t *testing.T) {
	for _, tc := range []struct {
		family, act string
		gelu        string // the kernel EncoderFuseGelu writes
	}{
		{arch.FamilyBERT, "gelu", "BiasGelu"},
		{arch.FamilyXLMR, "gelu", "BiasGelu"},
		{arch.FamilyBERT, "gelu_new", "FastGelu"},
		{arch.FamilyBERT, "gelu_pytorch_tanh", "FastGelu"},
		{arch.FamilyBERT, "relu", ""},
	} {
		cfg := arch.TinyEncoder(tc.family, false)
		cfg.HiddenAct = tc.act
		w, err := arch.RandomEncoder(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []Quant{QuantNone, QuantInt8} {
			for _, f := range []EncoderFusion{0, EncoderFuseSkipNorm, EncoderFuseGelu, EncoderFuseAttention, AllEncoderFusions} {
				name := tc.family + " " + tc.act + " " + q.String() + " " + f.String()
				want := map[string]bool{}
				if f&EncoderFuseSkipNorm != 0 {
					want["SkipLayerNormalization"] = true
				}
				if f&EncoderFuseGelu != 0 && tc.gelu != "" {
					want[tc.gelu] = true
				}
				if f&EncoderFuseAttention != 0 {
					want["MultiHeadAttention"] = true
				}
				o := NewEncoderOptions()
				o.Quant, o.Fusion = q, f
				m, err := BuildEncoder(w, o)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := m.Check(); err != nil {
					t.Errorf("%s: Check: %v", name, err)
				}
				used := map[string]bool{}
				for _, n := range m.Proto.GetGraph().GetNode() {
					if n.GetDomain() == msDomain {
						used[n.GetOpType()] = true
					}
				}
				if !maps.Equal(used, want) {
					t.Errorf("%s: contrib kernels %v, want %v", name, slices.Sorted(maps.Keys(used)), slices.Sorted(maps.Keys(want)))
				}
				meta, _ := m.Meta(MetaEncoderFusion)
				if (f == 0 && meta != "") || (f != 0 && meta != f.String()) {
					t.Errorf("%s: %s = %q", name, MetaEncoderFusion, meta)
				}
				if q != QuantNone {
					continue // an int8 graph keeps no float32 projections to read back
				}
				back, err := m.EncoderWeights()
				if err != nil {
					t.Fatalf("%s: EncoderWeights: %v", name, err)
				}
				for n, tw := range w.Tensors {
					if !slices.Equal(back.Tensors[n].Data, tw.Data) {
						t.Errorf("%s: tensor %s read back differs", name, n)
					}
				}
			}
		}
	}
}

func TestEncoderFusionNames(t *testing.T) {
	for _, f := range []EncoderFusion{0, EncoderFuseSkipNorm, EncoderFuseGelu | EncoderFuseAttention, AllEncoderFusions} {
		got, err := ParseEncoderFusion(f.String())
		if err != nil || got != f {
			t.Errorf("ParseEncoderFusion(%q) = %v, %v; want %v", f.String(), got, err, f)
		}
	}
	if f, err := ParseEncoderFusion("all"); err != nil || f != AllEncoderFusions {
		t.Errorf("all: %v, %v", f, err)
	}
	if _, err := ParseEncoderFusion("skipnorm+rotary"); err == nil || !strings.Contains(err.Error(), `"rotary"`) {
		t.Errorf("rotary: err %v", err)
	}
	o := NewEncoderOptions()
	o.Fusion, o.Quant, o.Storage.Alignment = EncoderFusion(0x80), QuantInt8Mixed, 3
	err := o.Validate()
	for _, part := range []string{"unknown encoder fusion", "for decoder rerankers", "alignment"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("Validate: %v, want it to mention %q", err, part)
		}
	}
}
