package retrieval

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/lexrank"
)

// TestBM25ParamsOneRule: the request scorer (lexical, used by the scan
// level), the index (bm25) and a search's Ranking accept exactly the same
// k1 and b, so no value passes one check and fails a later one.
func TestBM25ParamsOneRule(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, k1 := range []float64{-1, 0, 0.9, 100, 500, 1000, 1000.5, 5000, nan, inf} {
		for _, b := range []float64{-0.1, 0, 0.5, 1, 1.5, nan} {
			lc := lexical.DefaultConfig()
			lc.K1, lc.B = k1, b
			lex := lc.Validate() == nil
			idx := bm25.Config{K1: k1, B: b}.Validate() == nil
			rk := lexrank.DefaultRanking()
			rk.K1, rk.B = k1, b
			rank := rk.Validate() == nil
			if lex != idx || lex != rank {
				t.Errorf("k1 %v b %v: lexical accepts %v, bm25 %v, lexrank.Ranking %v", k1, b, lex, idx, rank)
			}
		}
	}
}

// TestBM25K1RefusedAtStart: a k1 the scan level's scorer would refuse is
// a configuration error at New, not a failure of every search while the
// index builds.
func TestBM25K1RefusedAtStart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BM25.K1 = 5000
	if _, err := New(openStore(t, ""), nil, cfg); err == nil {
		t.Fatal("New accepted BM25 K1 5000")
	}
}

// TestScanWithLargeK1: a per-query k1 at the rule's bound is served at
// the scan level (index not built yet) as at the index level.
func TestScanWithLargeK1(t *testing.T) {
	st := openStore(t, "")
	e0 := newService(t, st, nil, DefaultConfig())
	mustAdd(t, e0, item("a", "1", "apple apple apple pie"), item("a", "2", "apple tart"))
	_ = e0.Close()
	e, err := New(st, nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	rk := lexrank.PlainBM25()
	rk.K1 = lexical.MaxK1
	res, err := e.Retrieve(context.Background(), Query{Namespace: "a", Text: "apple", Ranking: &rk})
	if err != nil || res.Level != LevelScan || len(res.Candidates) != 2 || res.Candidates[0].ID != "1" {
		t.Fatalf("scan with k1 %v = %+v, %v", rk.K1, res, err)
	}
	rk.K1 = lexical.MaxK1 * 5
	if _, err := e.Retrieve(context.Background(), Query{Namespace: "a", Text: "apple", Ranking: &rk}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("k1 %v: %v, want ErrInvalid", rk.K1, err)
	}
}
