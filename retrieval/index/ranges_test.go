package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// TestAllowedRanges: the allow-list of a filter with ranges (read from the
// sorted times and numbers) is exactly the memories the filter matches,
// read one by one, after puts, replacing puts and removals; for every
// bound kind, equal values at a strict bound, times in other zones,
// metadata strings that are not times, numbers under a time range and
// times under a numeric one, and ranges combined with equalities.
func TestAllowedRanges(t *testing.T) {
	s, err := New(Config{BM25: bm25.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("A", 5*3600+1800), time.FixedZone("B", -8*3600)}
	all := map[string]memory.Memory{}
	mk := func(i int) memory.Memory {
		m := memory.Memory{ID: fmt.Sprintf("m%03d", i), Text: "x", Metadata: memory.Metadata{}}
		if rng.IntN(5) > 0 {
			// Few distinct instants, so that ties at the bounds are common.
			m.Time = day0.Add(time.Duration(rng.IntN(20)) * time.Hour).In(zones[rng.IntN(len(zones))])
		}
		switch rng.IntN(5) {
		case 0: // absent
		case 1:
			m.Metadata["n"] = memory.String("not a number")
		case 2:
			m.Metadata["n"] = memory.String(day0.Add(time.Duration(rng.IntN(20)) * time.Hour).In(zones[rng.IntN(3)]).Format(time.RFC3339Nano))
		default:
			m.Metadata["n"] = memory.Number(float64(rng.IntN(21)-10) / 2)
		}
		if rng.IntN(2) == 0 {
			m.Metadata["kind"] = memory.String([]string{"a", "b"}[rng.IntN(2)])
		}
		return m
	}
	at := func(h int) string { return day0.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	rg := func(key string, r filter.Range) filter.Condition { return filter.Condition{Key: key, Range: &r} }
	kindA := filter.Condition{Key: "kind", Match: &filter.Match{Value: "a"}}
	filters := []struct {
		name string
		f    filter.Filter
	}{
		{"number gte lt", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{GTE: -1.0, LT: 2.0})}}},
		{"number gt lte", filter.Filter{Must: []filter.Condition{rg("metadata.n", filter.Range{GT: -1.0, LTE: 2.0})}}},
		{"number lt only", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{LT: 0.0})}}},
		{"number gt only", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{GT: 4.5})}}},
		{"number none in range", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{GT: 100.0})}}},
		{"time field", filter.Filter{Must: []filter.Condition{rg("time", filter.Range{GTE: at(3), LT: at(9)})}}},
		{"time field strict", filter.Filter{Must: []filter.Condition{rg("time", filter.Range{GT: at(3), LTE: at(9)})}}},
		{"time field lte", filter.Filter{Must: []filter.Condition{rg("time", filter.Range{LTE: at(2)})}}},
		{"metadata time", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{GT: at(4), LT: at(15)})}}},
		{"unknown key", filter.Filter{Must: []filter.Condition{rg("nope", filter.Range{GT: 0.0})}}},
		{"range and equality", filter.Filter{Must: []filter.Condition{kindA, rg("n", filter.Range{GTE: 0.0})}}},
		{"two ranges", filter.Filter{Must: []filter.Condition{rg("n", filter.Range{GTE: 0.0}), rg("time", filter.Range{LT: at(5)})}}},
		{"range and must_not", filter.Filter{Must: []filter.Condition{rg("time", filter.Range{GTE: at(10)})}, MustNot: []filter.Condition{kindA}}},
		{"range in should (no index)", filter.Filter{Should: []filter.Condition{rg("n", filter.Range{LT: -3.0}), rg("time", filter.Range{GT: at(17)})}}},
	}
	check := func(step string) {
		t.Helper()
		for _, tc := range filters {
			m, err := filter.Compile(&tc.f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var want []string
			for id, mem := range all {
				if m.Match(filter.Of(mem)) {
					want = append(want, id)
				}
			}
			got := slices.Clone(s.Allowed(m).IDs)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: allowed %v, want %v", step, tc.name, got, want)
			}
			// Each top-level range is read from the sorted entries, and
			// they alone hold exactly the memories its condition accepts.
			var ranges []filter.Condition
			for _, c := range tc.f.Must {
				if c.Range != nil {
					ranges = append(ranges, c)
				}
			}
			if len(m.Intervals()) != len(ranges) {
				t.Fatalf("%s: %d intervals, want %d", tc.name, len(m.Intervals()), len(ranges))
			}
			for i, iv := range m.Intervals() {
				one, _ := filter.Compile(&filter.Filter{Must: ranges[i : i+1]})
				var want, got []string
				for id, mem := range all {
					if one.Match(filter.Of(mem)) {
						want = append(want, id)
					}
				}
				s.attrs.rg.in(iv, func(id string) bool { got = append(got, id); return true })
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s, %s, range %d: sorted entries give %v, want %v", step, tc.name, i, got, want)
				}
			}
		}
	}
	for i := range 300 {
		m := mk(i)
		s.PutText(m)
		all[m.ID] = m
	}
	check("after puts")
	for i := range 300 {
		switch rng.IntN(3) {
		case 0:
			m := mk(i)
			s.PutText(m)
			all[m.ID] = m
		case 1:
			id := fmt.Sprintf("m%03d", i)
			s.Remove(id)
			delete(all, id)
		}
	}
	check("after replacing and removing")
	for id := range all {
		s.Remove(id)
		delete(all, id)
	}
	check("after removing all")
	if n := s.attrs.rg.len(); n != 0 {
		t.Errorf("%d sorted entries left after removing every memory", n)
	}
}

// TestAllowedRangesConcurrent: allow-lists built while a writer puts and
// removes memories (the Set's writers are serialised by its keeper;
// readers take no lock of their own) hold no ID twice, and once the
// writer is done the allow-list is the final state's. Run under -race.
func TestAllowedRangesConcurrent(t *testing.T) {
	s, err := New(Config{BM25: bm25.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := filter.Compile(&filter.Filter{Must: []filter.Condition{
		{Key: "n", Range: &filter.Range{GTE: 10.0, LT: 20.0}},
		{Key: "time", Range: &filter.Range{GTE: day0.Format(time.RFC3339)}}}})
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]memory.Memory{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3000 {
			id := fmt.Sprintf("m%02d", i%50)
			if i%7 == 0 {
				s.Remove(id)
				delete(final, id)
				continue
			}
			mem := memory.Memory{ID: id, Text: "x", Time: day0.Add(time.Duration(i%3-1) * time.Hour),
				Metadata: memory.Metadata{"n": memory.Number(float64(i % 30))}}
			s.PutText(mem)
			final[id] = mem
		}
	}()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		ids := s.Allowed(m).IDs
		if len(ids) != len(uniq(ids)) {
			t.Fatalf("an allow-list holds an ID twice: %v", ids)
		}
	}
	var want []string
	for id, mem := range final {
		if m.Match(filter.Of(mem)) {
			want = append(want, id)
		}
	}
	got := slices.Clone(s.Allowed(m).IDs)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the writes: allowed %v, want %v", got, want)
	}
	t.Logf("%d allow-lists built during the writes", reads)
}

func uniq(ids []string) []string {
	c := slices.Clone(ids)
	slices.Sort(c)
	return slices.Compact(c)
}
