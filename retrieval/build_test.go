package retrieval

import (
	"context"
	"fmt"
	"testing"
)

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
	e3 := newService(t, st, nil, cfg)
	res, err = e3.Retrieve(ctx, Query{Namespace: "a", Text: "w17 topic"})
	if err != nil || res.Level != LevelBM25 || res.Vectors != VectorsNotConfigured || res.Why != "" || res.Candidates[0].ID != "m0017" {
		t.Fatalf("no embedder: %+v, %v", res.Level, err)
	}
	if _, ok := res.Candidates[0].Scores["vector"]; ok {
		t.Fatal("bm25 level reported a vector score")
	}
}
