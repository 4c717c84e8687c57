package model

import (
	"slices"
	"testing"
)

func TestDetectOutput(t *testing.T) {
	cases := []struct {
		dims    []int64
		want    OutputKind
		wantErr bool
	}{
		{[]int64{-1}, OutputLogit, false},
		{[]int64{-1, 2}, OutputYesNo, false},
		{[]int64{-1, 151669}, OutputVocabLast, false},
		{[]int64{-1, -1}, outputRank2, false},
		{[]int64{-1, -1, 151669}, OutputVocabAll, false},
		{[]int64{-1, -1, -1}, OutputVocabAll, false},
		{[]int64{-1, 5}, 0, true},          // neither 2 nor a vocabulary
		{[]int64{-1, -1, 100}, 0, true},    // vocabulary smaller than the ids
		{[]int64{-1, -1, -1, -1}, 0, true}, // rank 4
		{[]int64{}, 0, true},               // scalar
	}
	for _, c := range cases {
		got, err := detectOutput("logits", c.dims, 9693, 2152)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("detectOutput(%v) = %v, %v; want %v, err %v", c.dims, got, err, c.want, c.wantErr)
		}
	}
}

func TestExtractLogits(t *testing.T) {
	const yes, no = 3, 1
	cases := []struct {
		name  string
		kind  OutputKind
		data  []float32
		shape []int64
		last  []int
		want  []float32
		err   bool
	}{
		{"logit", OutputLogit, []float32{0.5, -2}, []int64{2}, []int{0, 0}, []float32{0.5, -2}, false},
		{"yes/no", OutputYesNo, []float32{1, 4, 2, 0}, []int64{2, 2}, []int{0, 0}, []float32{3, -2}, false},
		{"rank2 dynamic as yes/no", outputRank2, []float32{1, 4}, []int64{1, 2}, []int{0}, []float32{3}, false},
		{"vocab last", OutputVocabLast, []float32{0, 1, 0, 5, 9, 9, 7, 9, 2, 9}, []int64{2, 5}, []int{0, 0}, []float32{4, -5}, false},
		{"rank2 dynamic as vocab", outputRank2, []float32{0, 1, 0, 5, 9}, []int64{1, 5}, []int{0}, []float32{4}, false},
		// batch 1, seq 2, vocab 4: position 1 is the last real token.
		{"vocab all", OutputVocabAll, []float32{0, 0, 0, 0, 0, 2, 0, 7}, []int64{1, 2, 4}, []int{1}, []float32{5}, false},
		{"vocab all uses last[b]", OutputVocabAll, []float32{0, 2, 0, 7, 0, 0, 0, 0}, []int64{1, 2, 4}, []int{0}, []float32{5}, false},
		{"wrong batch", OutputLogit, []float32{1}, []int64{1}, []int{0, 0}, nil, true},
		{"short data", OutputYesNo, []float32{1, 2, 3}, []int64{2, 2}, []int{0, 0}, nil, true},
		{"vocab too small", OutputVocabLast, []float32{1, 2}, []int64{1, 2}, []int{0}, nil, true},
		{"position outside seq", OutputVocabAll, make([]float32, 8), []int64{1, 2, 4}, []int{2}, nil, true},
	}
	for _, c := range cases {
		got, err := extractLogits(c.kind, c.data, c.shape, c.last, yes, no)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v, err %v", c.name, got, err, c.want, c.err)
		}
	}
}
