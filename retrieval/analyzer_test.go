package retrieval

import (
	"context"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/lexrank"
)

// TestMemorySearchCJKAnalyzer: the service's BM25 index, its scan level and
// its query analysis use the configured analyzer, not lexical's default.
//
// Query 天气预报 ("weather forecast"), with k1 0 (each matched query term
// adds its IDF once) over three memories:
//
//	t  看天气                 ("check the weather")
//	d  每天读报，预习功课，气色很好 (shares the characters 天 报 预 气, no bigram)
//	u  我喜欢猫               (nothing in common)
//
// Lucene IDF with N = 3: df 1 → ln(1 + 2.5/1.5) = 0.9808, df 2 → ln(1 +
// 1.5/2.5) = 0.4700.
//
// Default (unigram+bigram): the query's terms are 天 天气 气 气预 预 预报 报.
// t matches 天 (df 2), 天气 (df 1), 气 (df 2): 0.4700 + 0.9808 + 0.4700 =
// 1.9208. d matches 天, 气 (df 2) and 预, 报 (df 1): 2·0.4700 + 2·0.9808 =
// 2.9017. Ranks: d, t.
//
// Bigram: the query's terms are 天气 气预 预报; only t has one (天气):
// 0.9808. Ranks: t alone.
func TestMemorySearchCJKAnalyzer(t *testing.T) {
	ctx := context.Background()
	mems := []struct{ id, text string }{{"t", "看天气"}, {"d", "每天读报，预习功课，气色很好"}, {"u", "我喜欢猫"}}
	rk := lexrank.Ranking{K1: 0, B: 0}
	for _, tc := range []struct {
		mode lexical.CJKMode
		want []string
	}{
		{lexical.DefaultCJK, []string{"d", "t"}},
		{lexical.CJKBigram, []string{"t"}},
	} {
		an, err := lexical.NewAnalyzer(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.BM25.Analyzer = an
		st := openStore(t, "")
		e := newService(t, st, nil, cfg)
		for _, m := range mems {
			mustAdd(t, e, item("zh", m.id, m.text))
		}
		res, err := e.Retrieve(ctx, Query{Namespace: "zh", Text: "天气预报", Ranking: &rk})
		if got := candIDs(res.Candidates); err != nil || res.Level != LevelBM25 || !slices.Equal(got, tc.want) {
			t.Errorf("%s, indexed: %v at %s (%v), want %v", tc.mode, got, res.Level, err, tc.want)
		}
		// The scan level (a restart, before the build) ranks the same.
		_ = e.Close()
		e2, err := New(st, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err = e2.Retrieve(ctx, Query{Namespace: "zh", Text: "天气预报", Ranking: &rk})
		if got := candIDs(res.Candidates); err != nil || res.Level != LevelScan || !slices.Equal(got, tc.want) {
			t.Errorf("%s, scan: %v at %s (%v), want %v", tc.mode, got, res.Level, err, tc.want)
		}
		_ = e2.Close()
	}
}
