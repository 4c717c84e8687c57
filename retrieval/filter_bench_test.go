package retrieval

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// BenchmarkFilter_Search: one namespace of RERANKD_FILTER_N memories
// (default 100,000) over bbolt, hybrid search (hash embeddings, dimension
// 64) with top_k 10, unfiltered and with filters matching 1%: an equality
// (kind: the metadata value index), a numeric range (n: the sorted
// numbers of a metadata key) and a time range (the memory's time: the
// sorted times), interleaved. Reported: each filter's p50 over the
// unfiltered p50 measured in the same run (target <= 2), and the least
// share of top_k that a filtered search filled with matching memories (1
// when every search returned 10 matching). Then a filtered listing (a
// page of 100 of the time range) from the indexes against the store read
// page by page, alternately: reported as the store read's p50 over the
// indexes'. Results and commands:
// docs/perf/measurements.md, "Filtered memory search".
func BenchmarkFilter_Search(b *testing.B) {
	benchFilterSearch(b, openStore(b, ""), DefaultConfig(), nil)
}

// BenchmarkFilter_SearchPG is BenchmarkFilter_Search over PostgreSQL: one
// replica's engine (the follower) over a pgtest server, its indexes built
// and caught up before measuring; each search also reads the namespace's
// change sequence and fills its results from the database. The server
// runs with fsync off (pgtest.NoFsync): only loading commits, and loading
// is not measured. The database is analyzed after loading, as autovacuum
// would have done.
func BenchmarkFilter_SearchPG(b *testing.B) {
	sbSkipShort(b)
	srv := pgtest.Start(b, pgtest.NoFsync())
	url := srv.NewDB(b)
	cfg := DefaultConfig()
	cfg.Follow.CatchUp = 10 * time.Minute // the first build of 100k memories
	benchFilterSearch(b, sbPG(b, url), cfg, func() { sbAnalyze(b, url) })
}

// benchFilterSearch is BenchmarkFilter_Search over st; loaded, when set,
// runs after loading.
func benchFilterSearch(b *testing.B, st Store, cfg Config, loaded func()) {
	n := 100_000
	if v := os.Getenv("RERANKD_FILTER_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("RERANKD_FILTER_N=%q: want an integer >= 1000", v)
		}
	}
	e := newService(b, st, &hashEmbedder{N: 64}, cfg)
	words := []string{"paris", "tea", "meeting", "deploy", "garden", "music", "budget", "travel", "code", "doctor"}
	items := make([]store.Item, 0, MaxBatch)
	for i := range n {
		kind := "common"
		if i%100 == 0 {
			kind = "rare"
		}
		items = append(items, store.Item{Memory: memory.Memory{Namespace: "bench", ID: fmt.Sprintf("m%06d", i),
			Text: fmt.Sprintf("note %d about %s and %s", i, words[i%10], words[(i/10)%10]), Time: day0.Add(time.Duration(i) * time.Minute),
			Metadata: memory.Metadata{"kind": memory.String(kind), "n": memory.Number(float64(i))}}})
		if len(items) == MaxBatch || i == n-1 {
			mustAdd(b, e, items...)
			items = items[:0]
		}
	}
	compile := func(f *filter.Filter) *filter.Matcher {
		m, err := filter.Compile(f)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	eq := compile(&filter.Filter{Must: []filter.Condition{{Key: "kind", Match: &filter.Match{Value: "rare"}}}})
	rng := compile(&filter.Filter{Must: []filter.Condition{{Key: "n", Range: &filter.Range{LT: float64(n / 100)}}}})
	from := day0.Add(time.Duration(n/2) * time.Minute)
	tr := compile(&filter.Filter{Must: []filter.Condition{{Key: "time", Range: &filter.Range{
		GTE: from.Format(time.RFC3339), LT: from.Add(time.Duration(n/100) * time.Minute).Format(time.RFC3339)}}}})
	if loaded != nil {
		loaded()
	}
	ctx := context.Background()
	run := func(q string, f *filter.Matcher) (time.Duration, int) {
		t0 := time.Now()
		res, err := e.Search(ctx, SearchRequest{TopK: 10, Query: Query{Namespace: "bench", Text: q, Filter: f}})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.Level != LevelHybrid {
			b.Fatalf("level %s (%s)", res.Level, res.Vectors)
		}
		return d, len(res.Results)
	}
	kinds := []*filter.Matcher{nil, eq, rng, tr}
	// Warm up: a replica's first search of the namespace waits for its
	// build.
	for _, f := range kinds {
		run(words[0], f)
	}
	lat := make([][]time.Duration, len(kinds))
	least := 10
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := words[i%10] + " " + words[(i/10+3)%10]
		for k := range kinds {
			k = (k + i) % len(kinds) // each kind first in turn
			d, got := run(q, kinds[k])
			lat[k] = append(lat[k], d)
			if k > 0 {
				least = min(least, got)
			}
		}
	}
	b.StopTimer()
	// Listing: the first page (100) of the time range's memories, from
	// the indexes (List) and by reading the store page by page
	// (listScan, the way before), alternately; both must list the same.
	var listed [2][]time.Duration
	for i := range 10 {
		var ids [2][]string
		for w := range 2 {
			w = (w + i) % 2
			t0 := time.Now()
			list := e.List
			if w == 1 {
				list = e.listScan
			}
			recs, _, err := list("bench", "", 100, tr)
			listed[w] = append(listed[w], time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				ids[w] = append(ids[w], r.Memory.ID)
			}
		}
		if len(ids[0]) != min(100, n/100) || !slices.Equal(ids[0], ids[1]) {
			b.Fatalf("listing: %d from the indexes, %d from the store, or different", len(ids[0]), len(ids[1]))
		}
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(listed[1])/p50(listed[0]), "list_scan_over_indexed_p50")
	pp := p50(lat[0])
	b.ReportMetric(pp, "unfiltered_p50_ms")
	b.ReportMetric(p50(lat[1])/pp, "eq_over_unfiltered_p50")
	b.ReportMetric(p50(lat[2])/pp, "range_over_unfiltered_p50")
	b.ReportMetric(p50(lat[3])/pp, "time_over_unfiltered_p50")
	b.ReportMetric(float64(least)/10, "filtered_topk_filled")
}
