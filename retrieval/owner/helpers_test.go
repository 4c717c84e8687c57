package owner_test

import (
	"context"
	"testing"

	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/owner"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// newEngine opens an engine over st, starts it and waits for its build.
func newEngine(t testing.TB, st *bolt.Store, emb retrieval.Embedder, cfg retrieval.Config) *retrieval.Service {
	t.Helper()
	e, err := retrieval.New(st, emb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	if err := e.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func mustAdd(t testing.TB, e *retrieval.Service, items ...store.Item) []retrieval.Added {
	t.Helper()
	got, err := e.Add(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ownerOf is e's keeper, which over a bbolt store is the owner.
func ownerOf(e *retrieval.Service) *owner.Owner { return e.Keeper().(*owner.Owner) }

// space returns ns's indexes as the owner holds them (nil when none).
func space(e *retrieval.Service, ns string) (*keep.Space, error) { return ownerOf(e).Space(ns), nil }
