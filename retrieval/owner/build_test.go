package owner_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/internal/servicetest"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestBuildWithLiveWrites deletes and rewrites memories while the start-up
// build runs: the build must not resurrect or overwrite any of them.
func TestBuildWithLiveWrites(t *testing.T) {
	ctx := context.Background()
	st := servicetest.OpenStore(t, "")
	servicetest.FillStore(t, st, "a", 600, false)
	cfg := retrieval.DefaultConfig()
	cfg.PageSize = 3           // many pages, so writes interleave with the build
	cfg.Owner.Backfill = false // vectors of the old memories would join the zebra hits
	svc, err := retrieval.New(st, &servicetest.HashEmbedder{N: 16}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	svc.Start()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 599; i >= 0; i -= 3 {
			id := fmt.Sprintf("m%04d", i)
			if i%2 == 0 {
				if err := svc.Delete("a", id); err != nil {
					t.Error(err)
				}
			} else if _, err := svc.Add(ctx, []store.Item{servicetest.Item("a", id, "rewritten zebra "+id)}); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if err := svc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("after build with live writes: %+v, %v", rep, err)
	}
	res, err := svc.Retrieve(ctx, retrieval.Query{Namespace: "a", Text: "zebra", Depth: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 100 {
		t.Fatalf("%d memories mention zebra, want the 100 rewritten", len(res.Candidates))
	}
	res, _ = svc.Retrieve(ctx, retrieval.Query{Namespace: "a", Text: "w596"})
	if slices.Contains(servicetest.CandIDs(res.Candidates), "m0596") {
		t.Fatalf("a deleted memory came back from the build: %v %s", servicetest.CandIDs(res.Candidates), res.Level)
	}
}

func TestCheckRepairsDisagreement(t *testing.T) {
	ctx := context.Background()
	st := servicetest.OpenStore(t, "")
	servicetest.FillStore(t, st, "a", 20, true)
	servicetest.FillStore(t, st, "b", 5, false)
	svc := newService(t, st, &servicetest.HashEmbedder{N: 16}, retrieval.DefaultConfig())
	rep, err := svc.Check(ctx, false)
	if err != nil || rep.Memories != 25 || rep.Namespaces != 2 || len(rep.Disagreements) != 0 {
		t.Fatalf("clean check: %+v, %v", rep, err)
	}
	// Break the index behind the service's back: a ghost entry, a lost one.
	sp, _ := space(svc, "a")
	sp.Indexes().Lex.Add("ghost", "boo")
	sp.Indexes().Lex.Delete("m0003")
	sp.Indexes().Vec.Delete("m0004")
	rep, err = svc.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 1 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	d := rep.Disagreements[0]
	if d.Namespace != "a" || fmt.Sprint(d.Missing) != "[m0003]" || fmt.Sprint(d.Extra) != "[ghost]" ||
		d.StoreVectors != 20 || d.IndexedVectors != 19 || d.Repaired {
		t.Fatalf("disagreement %+v", d)
	}
	if rep, err = svc.Check(ctx, true); err != nil || !rep.Disagreements[0].Repaired {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	if rep, err = svc.Check(ctx, false); err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("after repair: %+v, %v", rep, err)
	}
	res, _ := svc.Retrieve(ctx, retrieval.Query{Namespace: "a", Text: "w3"})
	if len(res.Candidates) == 0 || res.Candidates[0].ID != "m0003" {
		t.Fatalf("repaired memory not found: %v", servicetest.CandIDs(res.Candidates))
	}
}

// TestOwnedStoreIsNotShared: over a store of this process alone the
// service's keeper is the owner, which answers none of the follower's
// questions: not shared, zero follow counters, nothing to ping.
func TestOwnedStoreIsNotShared(t *testing.T) {
	svc := newService(t, servicetest.OpenStore(t, ""), nil, retrieval.DefaultConfig())
	if _, ok := svc.Keeper().(interface{ FollowStats() retrieval.FollowStats }); ok {
		t.Errorf("the owner %T answers FollowStats", svc.Keeper())
	}
	if svc.Shared() {
		t.Error("Shared() = true over a bbolt store")
	}
	if f := svc.Follow(); f != (retrieval.FollowStats{}) {
		t.Errorf("Follow() = %+v, want zero", f)
	}
	if err := svc.Ping(context.Background()); err != nil {
		t.Errorf("Ping() = %v, want nil", err)
	}
}
