package rerank

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// wordPairs encodes a pair as one id per word, "[CLS] q [SEP] d [SEP]"
// style: the query side (101, query words, 102) has type 0 and the
// document side (document words, 102) type 1; with noTypes set it returns
// nil type ids, as an XLM-R-style encoder does.
type wordPairs struct{ noTypes bool }

func (w wordPairs) EncodePair(query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error) {
	ids = append(ids, 101)
	for _, q := range strings.Fields(query) {
		ids = append(ids, len(q))
	}
	ids = append(ids, 102)
	nq := len(ids)
	for _, d := range strings.Fields(doc) {
		ids = append(ids, 1000+len(d))
	}
	ids = append(ids, 102)
	if w.noTypes {
		return ids, nil, false, nil
	}
	typeIDs = make([]int, len(ids))
	for i := nq; i < len(ids); i++ {
		typeIDs[i] = 1
	}
	return ids, typeIDs, false, nil
}

// typeSum is an engine whose logit is the sum of a sequence's type ids
// (so a type lost or moved to another row changes it), that records each
// call's types argument.
type typeSum struct{ calls [][][]int }

func (e *typeSum) Logits(_ context.Context, seqs, types [][]int) ([]float32, error) {
	e.calls = append(e.calls, types)
	out := make([]float32, len(seqs))
	for i := range seqs {
		if types != nil {
			for _, t := range types[i] {
				out[i] += float32(t)
			}
		}
	}
	return out, nil
}

func (e *typeSum) Close() error { return nil }

// TestPairTypesBesideIDs: a cross-encoder's token types reach the engine
// as their own argument, row for row with the ids (whatever order the
// length-sorted batches put the rows in), and a pair encoder without types
// makes calls that carry none.
func TestPairTypesBesideIDs(t *testing.T) {
	docs := []string{"a much longer document of many words here", "short", "a middle one"}
	for _, tc := range []struct {
		name    string
		noTypes bool
	}{{"typed", false}, {"untyped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := &typeSum{}
			cfg := DefaultScorerConfig()
			cfg.MaxBatch, cfg.MaxPadRatio = 2, 0 // two calls, rows reordered by length
			s, err := NewPairScorer(wordPairs{noTypes: tc.noTypes}, e, cfg, PairModel{Name: "words"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Score(context.Background(), Request{Query: "what was said", Docs: docs})
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range docs {
				// The document side's tokens (its words and the last
				// [SEP]) are type 1.
				want := 0.0
				if !tc.noTypes {
					want = float64(len(strings.Fields(d)) + 1)
				}
				if got[i].Logit != want {
					t.Errorf("doc %d: logit %v, want %v (its own type ids' sum)", i, got[i].Logit, want)
				}
			}
			if len(e.calls) != 2 {
				t.Fatalf("%d engine calls, want 2 (MaxBatch 2, 3 documents)", len(e.calls))
			}
			if typed := slices.ContainsFunc(e.calls, func(c [][]int) bool { return c != nil }); typed == tc.noTypes {
				t.Errorf("calls' types %v: want types exactly when the encoder gives them", e.calls)
			}
		})
	}
}

func TestSeqs(t *testing.T) {
	prompts := []Prompt{{IDs: []int{1, 2}}, {IDs: []int{3}, TypeIDs: []int{1}}, {IDs: []int{4, 5, 6}}}
	for _, tc := range []struct {
		name      string
		batch     []int
		wantSeqs  [][]int
		wantTypes [][]int
	}{
		{"all", nil, [][]int{{1, 2}, {3}, {4, 5, 6}}, [][]int{nil, {1}, nil}},
		{"batch with a typed prompt", []int{1, 0}, [][]int{{3}, {1, 2}}, [][]int{{1}, nil}},
		{"batch without one", []int{2, 0}, [][]int{{4, 5, 6}, {1, 2}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seqs, types := Seqs(prompts, tc.batch)
			if !slices.EqualFunc(seqs, tc.wantSeqs, slices.Equal) {
				t.Errorf("seqs %v, want %v", seqs, tc.wantSeqs)
			}
			if (types == nil) != (tc.wantTypes == nil) || !slices.EqualFunc(types, tc.wantTypes, slices.Equal) {
				t.Errorf("types %v, want %v", types, tc.wantTypes)
			}
			for i := range types {
				if (types[i] == nil) != (tc.wantTypes[i] == nil) {
					t.Errorf("types[%d] %v, want %v", i, types[i], tc.wantTypes[i])
				}
			}
		})
	}
}
