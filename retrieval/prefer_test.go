package retrieval

import (
	"context"
	"math"
	"testing"

	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestPrefer: at equal relevance the preferred memory ranks first, the
// score is the documented blend, and a weight of 0 is refused.
func TestPrefer(t *testing.T) {
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	src := func(it store.Item, s string) store.Item { it.Memory.Source = s; return it }
	mustAdd(t, e,
		src(item("n", "a", "deploy with make release"), "/other"),
		src(item("n", "b", "deploy with make release"), "/proj"),
		src(item("n", "c", "deploy deploy deploy release notes for deploy"), "/other"))
	m, err := filter.Compile(&filter.Filter{Must: []filter.Condition{{Key: "source", Match: &filter.Match{Value: "/proj"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plainBM25, err := lexrank.RankingByName("bm25") // no context term: a and b tie
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Namespace: "n", Text: "deploy make release", Mode: ModeBM25, Ranking: &plainBM25}
	plain, err := e.Search(ctx, SearchRequest{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	pos := func(res SearchResult, id string) int {
		for i, c := range res.Results {
			if c.ID == id {
				return i
			}
		}
		return -1
	}
	if pos(plain, "a") > pos(plain, "b") {
		t.Fatalf("without prefer a and b tie, a first by ID: %v", candIDs(plain.Results))
	}
	for _, w := range []float64{0.05, 0.5} {
		res, err := e.Search(ctx, SearchRequest{Query: q, Prefer: &Prefer{Match: m, Weight: w}})
		if err != nil {
			t.Fatal(err)
		}
		if pos(res, "b") > pos(res, "a") {
			t.Errorf("weight %v: preferred b below a: %v", w, candIDs(res.Results))
		}
		for _, c := range res.Results {
			hit := 0.0
			if c.ID == "b" {
				hit = 1
			}
			if c.Scores[ScorePrefer] != hit || math.Abs(c.Score-(c.Scores["fused"]*(1-w)+w*hit)) > 1e-9 {
				t.Errorf("weight %v: %s score %v scores %v", w, c.ID, c.Score, c.Scores)
			}
		}
	}
	if _, err := e.Search(ctx, SearchRequest{Query: q, Prefer: &Prefer{Match: m, Weight: 0}}); err == nil {
		t.Error("weight 0 accepted")
	}
}
