package ref

import (
	"math"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

func TestL2Normalize(t *testing.T) {
	for _, tc := range []struct {
		in   []float32
		want []float64
		err  bool
	}{
		{[]float32{3, 4}, []float64{0.6, 0.8}, false},
		{[]float32{-2}, []float64{-1}, false},
		{[]float32{0, 0}, nil, true},
		{[]float32{float32(math.NaN()), 1}, nil, true},
		{[]float32{float32(math.Inf(1))}, nil, true},
	} {
		got, err := L2Normalize(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("L2Normalize(%v) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		near(t, "L2Normalize", got, tc.want, 1e-7)
	}
}

// TestEmbedding: the vector is the normalised final hidden state at the
// last token, and an untied config without lm_head is fine.
func TestEmbedding(t *testing.T) {
	c := arch.Tiny()
	c.VocabSize, c.TieWordEmbeddings = 100, false
	w, err := arch.Random(c.Backbone(), 4)
	if err != nil {
		t.Fatal(err)
	}
	untied := &arch.Weights{Config: c, Tensors: w.Tensors} // as a Qwen3Model checkpoint reads
	ids := []int{5, 17, 42, 99}
	got, err := Embedding(untied, ids)
	if err != nil {
		t.Fatal(err)
	}
	h, err := FinalHidden(w, ids)
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, v := range h {
		n += float64(v) * float64(v)
	}
	want := make([]float64, len(h))
	for i, v := range h {
		want[i] = float64(v) / math.Sqrt(n)
	}
	near(t, "Embedding", got, want, 1e-7)
	if _, err := Embedding(untied, nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty sequence: %v", err)
	}
	if _, err := Embedding(nil, ids); err == nil {
		t.Error("nil weights accepted")
	}
}
