package owner_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/internal/servicetest"
	"github.com/rerankd/rerankd/retrieval/store"
)

// BenchmarkService_StartSnapshot measures a start (New, Start, Wait: BM25
// and vector index of one namespace) over n×256 stored vectors, first
// without a snapshot (the vector index is rebuilt, then saved at Close),
// then from the snapshot, and reports both and their ratio from the same
// run. ns/op is the snapshot start. n is 20000, 2000 with -short.
//
//	go test -run '^$' -bench StartSnapshot -benchtime 3x ./retrieval
func BenchmarkService_StartSnapshot(b *testing.B) {
	n, dim := 20000, 256
	if testing.Short() {
		n = 2000
	}
	dir := b.TempDir()
	st := servicetest.OpenStore(b, filepath.Join(dir, "m.db"))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; {
		items := make([]store.Item, 0, 5000)
		for ; i < n && len(items) < cap(items); i++ {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			id := fmt.Sprintf("m%06d", i)
			items = append(items, store.Item{Memory: servicetest.Item("bench", id, "memory "+id).Memory, Vector: v})
		}
		if err := st.PutBatch(items); err != nil {
			b.Fatal(err)
		}
	}
	cfg := retrieval.DefaultConfig()
	cfg.Dim = dim
	cfg.Owner.SnapshotDir = filepath.Join(dir, "snapshots")
	cfg.Owner.SnapshotIdle = 0
	start := func(source string) time.Duration {
		t0 := time.Now()
		svc, err := retrieval.New(st, nil, cfg)
		if err != nil {
			b.Fatal(err)
		}
		svc.Start()
		if err := svc.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if s := svc.Stats("bench"); s.VectorSource != source || s.Vectors != n {
			b.Fatalf("stats %+v, want %d vectors from %s", s, n, source)
		}
		if err := svc.Close(); err != nil { // saves the snapshot after the rebuild
			b.Fatal(err)
		}
		return d
	}
	rebuild := start("rebuild")
	var loaded time.Duration
	runs := 0
	for b.Loop() {
		loaded += start("snapshot")
		runs++
	}
	avg := loaded / time.Duration(runs)
	b.ReportMetric(rebuild.Seconds(), "rebuild-s")
	b.ReportMetric(avg.Seconds(), "snapshot-s")
	b.ReportMetric(rebuild.Seconds()/avg.Seconds(), "speedup")
}
