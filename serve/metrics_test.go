package serve

import (
	"testing"

	"github.com/rerankd/rerankd/rerank"
)

// TestWatchPrefixCache: the prefix cache's counters are exported as read
// at scrape time, not when registered.
func TestWatchPrefixCache(t *testing.T) {
	m := NewMetrics()
	st := rerank.PrefixCacheStats{Lookups: 3, Hits: 2, ReusedTokens: 120, ComputedTokens: 30, Entries: 1, Bytes: 4096}
	m.WatchPrefixCache(func() rerank.PrefixCacheStats { return st })
	st.Lookups, st.Entries = 4, 2 // changed after registration
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			switch {
			case mt.GetCounter() != nil:
				got[f.GetName()] = mt.GetCounter().GetValue()
			case mt.GetGauge() != nil:
				got[f.GetName()] = mt.GetGauge().GetValue()
			}
		}
	}
	for name, want := range map[string]float64{
		"rerankd_prefix_cache_lookups_total": 4, "rerankd_prefix_cache_hits_total": 2,
		"rerankd_prefix_cache_reused_tokens_total": 120, "rerankd_prefix_cache_computed_tokens_total": 30,
		"rerankd_prefix_cache_bytes": 4096, "rerankd_prefix_cache_entries": 2,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
