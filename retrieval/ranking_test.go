package retrieval

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestSearchContext: the served path. A session where the answer ("Yes,
// it was amazing! The glaze came out blue.") shares no word with the
// question, and another session. Plain BM25 finds only the question's
// turn; the context stage brings the reply in right after it, scored
// 0 + 0.5·1 + 0.5·1 = 1.0 against the hit's 1 + 0 + 0.5·1 = 1.5 (the
// next turn, "Nice", two places off, stays out at window 1).
func TestSearchContext(t *testing.T) {
	ctx := context.Background()
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	turn := func(id, source, text string, min int) store.Item {
		return store.Item{Memory: memory.Memory{Namespace: "u", ID: id, Text: text, Source: source, Time: day0.Add(time.Duration(min) * time.Minute)}}
	}
	mustAdd(t, e,
		turn("t1", "chat-1", "Caroline: did the pottery class go well?", 0),
		turn("t2", "chat-1", "Melanie: Yes, it was amazing! The glaze came out blue.", 1),
		turn("t3", "chat-1", "Caroline: Nice", 2),
		turn("t4", "chat-2", "Melanie: my kids went camping", 0),
	)
	plain := lexrank.PlainBM25()
	ctxRanking := lexrank.Ranking{K1: 1.2, B: 0.75, Context: lexrank.Context{Window: 1, Neighbour: 0.5, Source: 0.5}}
	tests := []struct {
		name    string
		ranking *lexrank.Ranking
		want    []string
	}{
		{"plain bm25", &plain, []string{"t1"}},
		{"context", &ctxRanking, []string{"t1", "t2"}},
	}
	for _, tc := range tests {
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "pottery class", Ranking: tc.ranking}})
		if err != nil {
			t.Fatal(err)
		}
		if got := candIDs(res.Results); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "context" {
			r := res.Results
			if !near(r[0].Scores[post.ScoreLexical], 1.5) || !near(r[1].Scores[post.ScoreLexical], 1) || r[1].Scores[post.ScoreBM25] != 0 {
				t.Errorf("scores %v, %v: want lexical 1.5 and 1, bm25 0 for the reply", r[0].Scores, r[1].Scores)
			}
		}
	}
	// After a delete the neighbour is gone from the order too.
	if err := e.Delete("u", "t2"); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "pottery class", Ranking: &ctxRanking}})
	if err != nil {
		t.Fatal(err)
	}
	if got := candIDs(res.Results); !slices.Equal(got, []string{"t1", "t3"}) {
		t.Errorf("after deleting t2: %v, want t1, t3", got)
	}
	_, err = e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "x", Ranking: &lexrank.Ranking{K1: -1, B: 0.5}}})
	if err == nil || !strings.Contains(err.Error(), "ranking.k1 -1") {
		t.Errorf("bad ranking: %v", err)
	}
}
