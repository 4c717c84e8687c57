package onnx

import (
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

func TestBuildEmbedding(t *testing.T) {
	for _, tc := range []struct {
		outs EmbeddingOutputs
		tied bool
		want map[string][]string // output name -> dims
	}{
		{EmbedHidden, true, map[string][]string{OutputLastHidden: {"batch", "seq", "32"}}},
		{EmbedHiddenAndPooled, false, map[string][]string{OutputLastHidden: {"batch", "seq", "32"}, OutputSentenceEmbedding: {"batch", "32"}}},
		{EmbedPooled, true, map[string][]string{OutputSentenceEmbedding: {"batch", "32"}}},
	} {
		t.Run(tc.outs.String(), func(t *testing.T) {
			c := smallConfig(tc.tied)
			w := randomWeights(t, c.Backbone()) // no lm_head even when untied
			o := NewEmbeddingOptions()
			o.Outputs = tc.outs
			m, err := BuildEmbedding(w, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			got := map[string][]string{}
			for _, out := range m.Proto.GetGraph().GetOutput() {
				got[out.GetName()] = outputDims(out)
			}
			if len(got) != len(tc.want) {
				t.Errorf("outputs %v, want %v", got, tc.want)
			}
			for name, dims := range tc.want {
				if !slices.Equal(got[name], dims) {
					t.Errorf("output %s dims %v, want %v", name, got[name], dims)
				}
			}
			for _, init := range m.Proto.GetGraph().GetInitializer() {
				if init.GetName() == arch.LMHead || init.GetName() == HeadDiffName {
					t.Errorf("embedding graph has head initializer %s", init.GetName())
				}
			}
			if k, _ := m.Meta(MetaKind); k != KindEmbedding {
				t.Errorf("kind %q", k)
			}
			back, err := m.BackboneWeights()
			if err != nil {
				t.Fatal(err)
			}
			for name, tensor := range w.Tensors {
				if !slices.Equal(back.Tensors[name].Data, tensor.Data) {
					t.Errorf("tensor %s changed in the round trip", name)
				}
			}
			if _, _, err := m.Weights(); err == nil || !strings.Contains(err.Error(), "embedding model") {
				t.Errorf("reranker Weights of an embedding graph: %v", err)
			}
		})
	}
}

func TestBuildEmbeddingErrors(t *testing.T) {
	broken := randomWeights(t, smallConfig(true))
	delete(broken.Tensors, arch.FinalNorm)
	for _, tc := range []struct {
		name string
		w    *arch.Weights
		opts EmbeddingOptions
		want []string
	}{
		{"nil weights", nil, NewEmbeddingOptions(), []string{"nil weights"}},
		{"missing tensor", broken, NewEmbeddingOptions(), []string{"missing tensor model.norm.weight"}},
		{"bad options", randomWeights(t, smallConfig(true)), EmbeddingOptions{Outputs: 7, Storage: Storage{Alignment: 3}},
			[]string{"unknown embedding outputs", "alignment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildEmbedding(tc.w, tc.opts)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want it to mention %q", err, w)
				}
			}
		})
	}
	_, m := buildSmall(t, smallConfig(true), HeadLogit)
	if _, err := m.BackboneWeights(); err == nil || !strings.Contains(err.Error(), "want \"embedding\"") {
		t.Errorf("BackboneWeights of a reranker: %v", err)
	}
}
