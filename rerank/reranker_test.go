package rerank

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestReranker: the adapter passes the query, the texts, the instruction
// and the per-document cut as one request, and answers each document's
// probability in order; a scorer's error comes back as it is.
func TestReranker(t *testing.T) {
	var got Request
	r := Reranker{Instruction: "Find it", MaxDocTokens: 64, Score: func(_ context.Context, req Request) ([]Score, error) {
		got = req
		out := make([]Score, len(req.Docs))
		for i := range out {
			out[i] = Score{Score: float64(i+1) / 10, Logit: 5}
		}
		return out, nil
	}}
	scores, err := r.Rerank(context.Background(), "q", []string{"a", "b"})
	if err != nil || !slices.Equal(scores, []float64{0.1, 0.2}) {
		t.Fatalf("Rerank = %v, %v; want [0.1 0.2]", scores, err)
	}
	if got.Query != "q" || !slices.Equal(got.Docs, []string{"a", "b"}) || got.Instruction != "Find it" || got.MaxDocTokens != 64 {
		t.Errorf("request %+v", got)
	}
	boom := errors.New("boom")
	r.Score = func(context.Context, Request) ([]Score, error) { return nil, boom }
	if _, err := r.Rerank(context.Background(), "q", []string{"a"}); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}
