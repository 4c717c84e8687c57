package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// filterItems are n memories that all share the query's words, with
// kind "rare" on every hundredth, a number n = i, a day each.
func filterItems(ns string, n int) []store.Item {
	items := make([]store.Item, n)
	for i := range items {
		kind := "common"
		if i%100 == 0 {
			kind = "rare"
		}
		items[i] = store.Item{Memory: memory.Memory{Namespace: ns, ID: fmt.Sprintf("m%05d", i),
			Text: fmt.Sprintf("paris trip note %d with word%d", i, i%17), Time: day0.Add(time.Duration(i) * time.Hour),
			Source:   fmt.Sprintf("/proj/%d", i%3),
			Metadata: memory.Metadata{"kind": memory.String(kind), "n": memory.Number(float64(i)), "even": memory.Bool(i%2 == 0)}}}
	}
	return items
}

// TestFilteredRecall: with depth as small as top_k, every stage applies
// the filter before its cut-off, so a search returns top_k matching
// memories whenever that many match, at every level, over both keepers.
func TestFilteredRecall(t *testing.T) {
	const n = 2000
	stores := map[string]func(t *testing.T) Store{
		"bolt": func(t *testing.T) Store { return openStore(t, "") },
		"pg": func(t *testing.T) Store {
			st, err := pgstore.Open(pgtest.Shared(t).NewDB(t), pgstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Follow.CatchUp = time.Minute // a busy machine, the race detector
			e, err := New(open(t), &hashEmbedder{N: 32}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.Start()
			t.Cleanup(func() { _ = e.Close() })
			if err := e.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			items := filterItems("f", n)
			for i := 0; i < n; i += MaxBatch {
				mustAdd(t, e, items[i:min(i+MaxBatch, n)]...)
			}
			// A replica builds a namespace's vector index in the
			// background on its first use; dense mode fails until then.
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
				_, err := e.Search(context.Background(), SearchRequest{Query: Query{Namespace: "f", Text: "paris", Mode: ModeDense}})
				if err == nil {
					break
				}
				if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
					t.Fatalf("dense search before the cases: %v", err)
				}
			}
			rare := &filter.Filter{Must: []filter.Condition{{Key: "kind", Match: &filter.Match{Value: "rare"}}}}
			cases := []struct {
				name  string
				f     *filter.Filter
				match func(i int) bool
			}{
				{"equality 1%", rare, func(i int) bool { return i%100 == 0 }},
				{"range", &filter.Filter{Must: []filter.Condition{{Key: "n", Range: &filter.Range{GTE: 500.0, LT: 507.0}}}}, func(i int) bool { return i >= 500 && i < 507 }},
				{"time range", &filter.Filter{Must: []filter.Condition{{Key: "time", Range: &filter.Range{
					GTE: day0.Add(1000 * time.Hour).Format(time.RFC3339), LT: day0.Add(1003 * time.Hour).Format(time.RFC3339)}}}},
					func(i int) bool { return i >= 1000 && i < 1003 }},
				{"and/or/not", &filter.Filter{Must: []filter.Condition{{Key: "source", Match: &filter.Match{Value: "/proj/1"}}},
					Should:  []filter.Condition{{Key: "n", Range: &filter.Range{LT: 100.0}}, {Key: "n", Range: &filter.Range{GTE: 1900.0}}},
					MustNot: []filter.Condition{{Key: "even", Match: &filter.Match{Value: true}}}},
					func(i int) bool { return i%3 == 1 && (i < 100 || i >= 1900) && i%2 != 0 }},
				{"none", &filter.Filter{Must: []filter.Condition{{Key: "kind", Match: &filter.Match{Value: "absent"}}}}, func(int) bool { return false }},
				{"most (listed from the store)", &filter.Filter{MustNot: []filter.Condition{{Key: "kind", Match: &filter.Match{Value: "rare"}}}}, func(i int) bool { return i%100 != 0 }},
			}
			for _, c := range cases {
				m, err := filter.Compile(c.f)
				if err != nil {
					t.Fatal(err)
				}
				matching := 0
				for i := range n {
					if c.match(i) {
						matching++
					}
				}
				for _, mode := range []Mode{ModeBM25, ModeDense, ModeHybrid} {
					res, err := e.Search(context.Background(), SearchRequest{TopK: 10,
						Query: Query{Namespace: "f", Text: "paris trip note", Depth: 10, Mode: mode, Filter: m}})
					if err != nil {
						t.Fatalf("%s %s: %v", c.name, mode, err)
					}
					if want := min(10, matching); len(res.Results) != want {
						t.Errorf("%s %s: %d results, want %d", c.name, mode, len(res.Results), want)
					}
					for _, r := range res.Results {
						var i int
						if _, err := fmt.Sscanf(r.ID, "m%05d", &i); err != nil || !c.match(i) {
							t.Errorf("%s %s: %s does not match", c.name, mode, r.ID)
						}
					}
				}
				var want []string
				for i := range n {
					if c.match(i) {
						want = append(want, fmt.Sprintf("m%05d", i))
					}
				}
				checkListed(t, e, "f", m, c.name, want, len(want)*listDense < n)
			}
			// The indexes follow updates and deletes: m00500 leaves the
			// range by an update, m00501 by a delete, m00600 enters it.
			rng := &filter.Filter{Must: []filter.Condition{{Key: "n", Range: &filter.Range{GTE: 500.0, LT: 507.0}}}}
			m, err := filter.Compile(rng)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for id, n := range map[string]float64{"m00500": 5000, "m00600": 503.5} {
				if _, err := e.Update(ctx, "f", id, Patch{Metadata: memory.Metadata{"n": memory.Number(n)}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Delete("f", "m00501"); err != nil {
				t.Fatal(err)
			}
			checkListed(t, e, "f", m, "range after writes", []string{"m00502", "m00503", "m00504", "m00505", "m00506", "m00600"}, true)
			res, err := e.Search(ctx, SearchRequest{TopK: 10, Query: Query{Namespace: "f", Text: "paris trip note", Filter: m}})
			if err != nil {
				t.Fatal(err)
			}
			if got := candIDs(res.Results); len(got) != 6 || slices.Contains(got, "m00500") || slices.Contains(got, "m00501") || !slices.Contains(got, "m00600") {
				t.Errorf("range after writes: search found %v", got)
			}
			if _, err := e.Forget("f"); err != nil {
				t.Fatal(err)
			}
			checkListed(t, e, "f", m, "range after forget", nil, false)
		})
	}
}

// checkListed lists ns with filter m in pages of 7, from the indexes, from
// the store and by List, and checks that each lists want in ID order,
// every page but the last full; indexed: the indexes must answer (the
// filter matches few memories).
func checkListed(t *testing.T, e *Service, ns string, m *filter.Matcher, name string, want []string, indexed bool) {
	t.Helper()
	paths := []struct {
		name string
		list func(after string) ([]store.Record, string, error)
	}{
		{"indexes", func(after string) ([]store.Record, string, error) {
			recs, next, ok, err := e.listIndexed(ns, after, 7, m)
			switch {
			case err == nil && !ok && indexed:
				err = errors.New("the indexes were not used")
			case err == nil && !ok:
				return e.listScan(ns, after, 7, m) // as List does
			}
			return recs, next, err
		}},
		{"store", func(after string) ([]store.Record, string, error) { return e.listScan(ns, after, 7, m) }},
		{"List", func(after string) ([]store.Record, string, error) { return e.List(ns, after, 7, m) }},
	}
	for _, p := range paths {
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			recs, next, err := p.list(after)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, p.name, err)
			}
			if next != "" && len(recs) < 7 {
				t.Errorf("%s, %s: a page of %d before the end", name, p.name, len(recs))
			}
			for _, r := range recs {
				got = append(got, r.Memory.ID)
			}
			if next == "" {
				break
			}
			if pages > len(want)+1 {
				t.Fatalf("%s, %s: more pages than matching memories", name, p.name)
			}
			after = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s, %s: listed %d, first %v; want %d, first %v", name, p.name, len(got), got[:min(len(got), 10)], len(want), want[:min(len(want), 10)])
		}
	}
}
