package retrieval

import (
	"context"
	"testing"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// TestReplicaSeesUpdateAndForget: over one PostgreSQL database, an update
// and a forget acknowledged by one replica are what the other's very next
// search answers (read-your-writes across replicas).
func TestReplicaSeesUpdateAndForget(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	open := func() *Service {
		st, err := pgstore.Open(url, pgstore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(st, &hashEmbedder{N: 16}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		e.Start()
		t.Cleanup(func() { _ = e.Close(); _ = st.Close() })
		return e
	}
	a, b := open(), open()
	ctx := context.Background()
	mustAdd(t, a, item("n", "m1", "alice lives in paris"), item("n", "m2", "alice drinks tea"))
	search := func(e *Service, q string) []string {
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "n", Text: q, Mode: ModeBM25}})
		if err != nil {
			t.Fatal(err)
		}
		return candIDs(res.Results)
	}
	if got := search(b, "paris"); len(got) == 0 || got[0] != "m1" {
		t.Fatalf("replica b before update: %v", got)
	}
	text := "alice moved to berlin"
	if _, err := a.Update(ctx, "n", "m1", Patch{Text: &text}); err != nil {
		t.Fatal(err)
	}
	if got := search(b, "berlin"); len(got) != 1 || got[0] != "m1" {
		t.Errorf("replica b after update, berlin: %v", got)
	}
	if got := search(b, "paris"); len(got) != 0 {
		t.Errorf("replica b after update, paris: %v (stale)", got)
	}
	rec, err := b.Get("n", "m1")
	if err != nil || rec.Memory.Text != text || rec.Vector == nil {
		t.Errorf("replica b reads %+v (%v): want the new text, re-embedded", rec.Memory, err)
	}
	n, err := a.Forget("n")
	if err != nil || n != 2 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	if got := search(b, "alice"); len(got) != 0 {
		t.Errorf("replica b after forget: %v", got)
	}
	if got := search(a, "alice"); len(got) != 0 {
		t.Errorf("replica a after forget: %v", got)
	}
	for _, e := range []*Service{a, b} {
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "n", Text: "alice"}}) // hybrid: vectors gone too
		if err != nil || len(res.Results) != 0 {
			t.Errorf("hybrid search after forget: %v %v", candIDs(res.Results), err)
		}
	}
	if nss, err := b.Namespaces(nil); err != nil || len(nss) != 0 {
		t.Errorf("namespaces after forget: %v, %v", nss, err)
	}
	// And a new memory there afterwards is seen again.
	mustAdd(t, a, store.Item{Memory: item("n", "m3", "alice again").Memory})
	if got := search(b, "again"); len(got) != 1 {
		t.Errorf("replica b after re-add: %v", got)
	}
}

// TestOwnerUpdateAndForget: the same over a bbolt store, with the owner's
// indexes, across a restart (the forget is durable, and no snapshot brings
// old vectors back).
func TestOwnerUpdateAndForget(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/m.db"
	cfg := DefaultConfig()
	cfg.Owner.SnapshotDir = dir + "/snap"
	st := openStore(t, path)
	e := newService(t, st, &hashEmbedder{N: 16}, cfg)
	ctx := context.Background()
	mustAdd(t, e, item("n", "m1", "alice lives in paris"), item("n", "m2", "alice drinks tea"), item("o", "x", "other paris"))
	text := "alice moved to berlin"
	if _, err := e.Update(ctx, "n", "m1", Patch{Text: &text}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "n", Text: "paris", Mode: ModeBM25}})
	if err != nil || len(res.Results) != 0 {
		t.Fatalf("paris after update: %v %v", candIDs(res.Results), err)
	}
	if n, err := e.Forget("n"); err != nil || n != 2 {
		t.Fatalf("forget: %d %v", n, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2 := openStore(t, path)
	e2 := newService(t, st2, &hashEmbedder{N: 16}, cfg)
	for _, q := range []string{"alice", "berlin", "tea"} {
		res, err := e2.Search(ctx, SearchRequest{Query: Query{Namespace: "n", Text: q, Mode: ModeBM25}})
		if err != nil || len(res.Results) != 0 {
			t.Errorf("%s after restart: %v %v", q, candIDs(res.Results), err)
		}
	}
	res, err = e2.Search(ctx, SearchRequest{Query: Query{Namespace: "o", Text: "paris", Mode: ModeBM25}})
	if err != nil || len(res.Results) != 1 {
		t.Errorf("other namespace after restart: %v %v", candIDs(res.Results), err)
	}
}
