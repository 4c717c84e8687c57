package retrieval

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// BenchmarkFilter_Search: one namespace of RERANKD_FILTER_N memories
// (default 100,000) over bbolt, hybrid search (hash embeddings, dimension
// 64) with top_k 10, unfiltered and with filters matching 1%: an equality
// (kind, the metadata value index) and a numeric range (every memory's
// attributes read). Reported: each filter's p50 over the unfiltered p50
// measured in the same run (target <= 2), and the least share of top_k
// that a filtered search filled with matching memories (1 when every
// search returned 10 matching).
func BenchmarkFilter_Search(b *testing.B) {
	n := 100_000
	if v := os.Getenv("RERANKD_FILTER_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("RERANKD_FILTER_N=%q: want an integer >= 1000", v)
		}
	}
	cfg := DefaultConfig()
	e := newService(b, openStore(b, ""), &hashEmbedder{N: 64}, cfg)
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
	var plain, withEq, withRange []time.Duration
	least := 10
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := words[i%10] + " " + words[(i/10+3)%10]
		d, _ := run(q, nil)
		plain = append(plain, d)
		d, got := run(q, eq)
		withEq = append(withEq, d)
		least = min(least, got)
		d, got = run(q, rng)
		withRange = append(withRange, d)
		least = min(least, got)
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	pp, pe, pr := p50(plain), p50(withEq), p50(withRange)
	b.ReportMetric(pp, "unfiltered_p50_ms")
	b.ReportMetric(pe/pp, "eq_over_unfiltered_p50")
	b.ReportMetric(pr/pp, "range_over_unfiltered_p50")
	b.ReportMetric(float64(least)/10, "filtered_topk_filled")
}
