package retrieval

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// fill writes n memories "m0000".. into ns of st directly (no engine).
func fillStore(t testing.TB, st *bolt.Store, ns string, n int, withVec bool) {
	t.Helper()
	var items []store.Item
	for i := range n {
		it := item(ns, fmt.Sprintf("m%04d", i), fmt.Sprintf("memory number w%d about topic t%d", i, i%7))
		if withVec {
			v, _ := (&hashEmbedder{N: 16}).Embed(context.Background(), []string{it.Memory.Text}, false)
			it.Vector = v[0]
		}
		items = append(items, it)
	}
	if err := st.PutBatch(items); err != nil {
		t.Fatal(err)
	}
}

func TestDegradationLevels(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, "")
	fillStore(t, st, "a", 50, true)
	cfg := DefaultConfig()
	cfg.PageSize = 7
	cfg.Owner.Backfill = false // its progress would follow the build's (backfill_test.go)

	// Before the build has run the namespace is not indexed: scan.
	e, err := New(st, &hashEmbedder{N: 16}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "w17"})
	if err != nil || res.Level != LevelScan || len(res.Candidates) != 1 || res.Candidates[0].ID != "m0017" {
		t.Fatalf("before build: %+v, %v; want scan finding m0017", res, err)
	}
	if c := res.Candidates[0]; c.Text == "" || c.Time.IsZero() || len(c.Vector) != 16 {
		t.Fatalf("scan candidate not filled: %+v", c)
	}
	var phases []string
	cfg.Progress = func(phase string, done, total int) {
		if total != 50 || done > total {
			t.Errorf("progress %s %d/%d", phase, done, total)
		}
		if len(phases) == 0 || phases[len(phases)-1] != phase {
			phases = append(phases, phase)
		}
	}
	e2, err := New(st, &hashEmbedder{N: 16}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e2.Start()
	if err := e2.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if fmt.Sprint(phases) != "[bm25 vector]" {
		t.Fatalf("phases %v", phases)
	}
	res, err = e2.Retrieve(ctx, Query{Namespace: "a", Text: "w17 topic"})
	if err != nil || res.Level != LevelHybrid || res.Candidates[0].ID != "m0017" {
		t.Fatalf("after build: level %s top %v, %v", res.Level, candIDs(res.Candidates[:1]), err)
	}
	// The same store without an embedder: BM25 only, saying why.
	e3 := newEngine(t, st, nil, cfg)
	res, err = e3.Retrieve(ctx, Query{Namespace: "a", Text: "w17 topic"})
	if err != nil || res.Level != LevelBM25 || res.Why == "" || res.Candidates[0].ID != "m0017" {
		t.Fatalf("no embedder: %+v, %v", res.Level, err)
	}
	if _, ok := res.Candidates[0].Scores["vector"]; ok {
		t.Fatal("bm25 level reported a vector score")
	}
}

// TestBuildWithLiveWrites deletes and rewrites memories while the start-up
// build runs: the build must not resurrect or overwrite any of them.
func TestBuildWithLiveWrites(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, "")
	fillStore(t, st, "a", 600, false)
	cfg := DefaultConfig()
	cfg.PageSize = 3           // many pages, so writes interleave with the build
	cfg.Owner.Backfill = false // vectors of the old memories would join the zebra hits
	e, err := New(st, &hashEmbedder{N: 16}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Start()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 599; i >= 0; i -= 3 {
			id := fmt.Sprintf("m%04d", i)
			if i%2 == 0 {
				if err := e.Delete("a", id); err != nil {
					t.Error(err)
				}
			} else if _, err := e.Add(ctx, []store.Item{item("a", id, "rewritten zebra "+id)}); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if err := e.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("after build with live writes: %+v, %v", rep, err)
	}
	res, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "zebra", Depth: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 100 {
		t.Fatalf("%d memories mention zebra, want the 100 rewritten", len(res.Candidates))
	}
	res, _ = e.Retrieve(ctx, Query{Namespace: "a", Text: "w596"})
	if slices.Contains(candIDs(res.Candidates), "m0596") {
		t.Fatalf("a deleted memory came back from the build: %v %s", candIDs(res.Candidates), res.Level)
	}
}

func TestCheckRepairsDisagreement(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, "")
	fillStore(t, st, "a", 20, true)
	fillStore(t, st, "b", 5, false)
	e := newEngine(t, st, &hashEmbedder{N: 16}, DefaultConfig())
	rep, err := e.Check(ctx, false)
	if err != nil || rep.Memories != 25 || rep.Namespaces != 2 || len(rep.Disagreements) != 0 {
		t.Fatalf("clean check: %+v, %v", rep, err)
	}
	// Break the index behind the engine's back: a ghost entry, a lost one.
	sp, _ := e.space("a", false)
	sp.Indexes().Lex.Add("ghost", "boo")
	sp.Indexes().Lex.Delete("m0003")
	sp.Indexes().Vec.Delete("m0004")
	rep, err = e.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 1 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	d := rep.Disagreements[0]
	if d.Namespace != "a" || fmt.Sprint(d.Missing) != "[m0003]" || fmt.Sprint(d.Extra) != "[ghost]" ||
		d.StoreVectors != 20 || d.IndexedVectors != 19 || d.Repaired {
		t.Fatalf("disagreement %+v", d)
	}
	if rep, err = e.Check(ctx, true); err != nil || !rep.Disagreements[0].Repaired {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	if rep, err = e.Check(ctx, false); err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("after repair: %+v, %v", rep, err)
	}
	res, _ := e.Retrieve(ctx, Query{Namespace: "a", Text: "w3"})
	if len(res.Candidates) == 0 || res.Candidates[0].ID != "m0003" {
		t.Fatalf("repaired memory not found: %v", candIDs(res.Candidates))
	}
}
