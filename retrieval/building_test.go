package retrieval

import (
	"context"
	"errors"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestDenseWhileBuilding: a dense or hybrid search while the namespace's
// vector index is still being built is "retry shortly" (ErrUnavailable:
// 503 with Retry-After), not a client error; once built it is answered.
func TestDenseWhileBuilding(t *testing.T) {
	e := newService(t, openStore(t, ""), nil, Config{Dim: 3, BM25: DefaultConfig().BM25,
		Fusion: DefaultConfig().Fusion, HNSW: DefaultConfig().HNSW, Follow: DefaultConfig().Follow, Depth: 10, ScanLimit: 100, PageSize: 10})
	mustAdd(t, e, store.Item{Memory: memory.Memory{Namespace: "u", ID: "a", Text: "paris trip"}, Vector: []float32{1, 0, 0}})
	sp, err := e.space("u", false)
	if err != nil || sp == nil {
		t.Fatalf("space: %v", err)
	}
	q := Query{Namespace: "u", Text: "paris", Vector: []float32{1, 0, 0}}
	sp.Vec.Store(false) // as between Start and the end of the vector build
	for _, mode := range []Mode{ModeDense, ModeHybrid} {
		q.Mode = mode
		_, err := e.Retrieve(context.Background(), q)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNoVectors) || errors.Is(err, ErrInvalid) {
			t.Errorf("%s while building: %v, want ErrUnavailable only", mode, err)
		}
	}
	sp.Vec.Store(true)
	q.Mode = ModeDense
	if got, err := e.Retrieve(context.Background(), q); err != nil || len(got.Candidates) != 1 {
		t.Errorf("dense once built: %+v, %v", got, err)
	}
}
