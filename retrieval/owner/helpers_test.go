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

// newService opens a service over st, starts it and waits for its build.
func newService(t testing.TB, st *bolt.Store, emb retrieval.Embedder, cfg retrieval.Config) *retrieval.Service {
	t.Helper()
	svc, err := retrieval.New(st, emb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

func mustAdd(t testing.TB, svc *retrieval.Service, items ...store.Item) []retrieval.Added {
	t.Helper()
	got, err := svc.Add(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ownerOf is e's keeper, which over a bbolt store is the owner.
func ownerOf(svc *retrieval.Service) *owner.Owner { return svc.Keeper().(*owner.Owner) }

// space returns ns's indexes as the owner holds them (nil when none).
func space(svc *retrieval.Service, ns string) (*keep.Space, error) {
	return ownerOf(svc).Space(ns), nil
}
