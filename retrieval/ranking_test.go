package retrieval

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestWithContext: a worked example, scores derived by hand. Source s
// holds a, b, c in that order; d is alone in source t. BM25 hits: a (2,
// norm 1) and d (1, norm 0.5). Window 1, neighbour 0.5, source 0.5:
//
//	a: 1 + 0.5·0 (b is no hit) + 0.5·1 (best of s) = 1.5
//	b: 0 + 0.5·1 (a)           + 0.5·1              = 1.0
//	d: 0.5 + 0                 + 0.5·0.5            = 0.75
//
// c, two places from a, is no candidate. With window 2 it joins with
// b's 1.0, and the tie goes to the smaller ID (b, then c).
func TestWithContext(t *testing.T) {
	o := index.NewOrder()
	for i, id := range []string{"a", "b", "c"} {
		o.Add(id, "s", day0.Add(time.Duration(i)*time.Minute))
	}
	o.Add("d", "t", day0)
	hits := []bm25.Hit{{ID: "a", Score: 2, Norm: 1}, {ID: "d", Score: 1, Norm: 0.5}}
	tests := []struct {
		window int
		depth  int
		want   []lexHit
	}{
		{1, 10, []lexHit{{"a", 1.5, 2}, {"b", 1, 0}, {"d", 0.75, 1}}},
		{2, 10, []lexHit{{"a", 1.5, 2}, {"b", 1, 0}, {"c", 1, 0}, {"d", 0.75, 1}}},
		{2, 2, []lexHit{{"a", 1.5, 2}, {"b", 1, 0}}},
	}
	for _, tc := range tests {
		got := withContext(o, hits, Context{Window: tc.window, Neighbour: 0.5, Source: 0.5}, tc.depth)
		if !slices.Equal(got, tc.want) {
			t.Errorf("window %d depth %d: %v, want %v", tc.window, tc.depth, got, tc.want)
		}
	}
}

// TestExpansionTerms: a worked example. Query "kiwi" hits m1 "kiwi lemon
// melon" and m2 "kiwi lemon plum" with equal scores (norm 1 each); m3
// "fig" is the only other memory (N = 3). Votes: lemon 2, melon 1, plum
// 1. IDF = log(1 + (N - df + 0.5)/(df + 0.5)): lemon (df 2) log 1.6 =
// 0.470, melon and plum (df 1) log 2.667 = 0.981. Offer weights: lemon
// 0.940, melon = plum 0.981: the rarer terms win over the more voted one,
// melon before plum by name. Two terms at weight 0.4: melon 0.4, plum 0.4.
func TestExpansionTerms(t *testing.T) {
	lex, err := bm25.New(bm25.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	lex.Add("m1", "kiwi lemon melon")
	lex.Add("m2", "kiwi lemon plum")
	lex.Add("m3", "fig")
	q := []bm25.Term{{Text: "kiwi", Weight: 1}}
	fb := lex.SearchTerms(q, 2, bm25.DefaultConfig())
	got := expansionTerms(lex, q, fb, Expansion{Docs: 2, Terms: 2, Weight: 0.4})
	want := []bm25.Term{{Text: "melon", Weight: 0.4}, {Text: "plum", Weight: 0.4}}
	if !slices.Equal(got, want) {
		t.Errorf("expansion = %v, want %v", got, want)
	}
	got = expansionTerms(lex, q, fb, Expansion{Docs: 2, Terms: 3, Weight: 0.4})
	if len(got) != 3 || got[2].Text != "lemon" || !near(got[2].Weight, 0.4*2*0.4700036292457356/(0.9808292530117262)) {
		t.Errorf("third term = %v, want lemon at 0.4·0.940/0.981", got)
	}
}

func term(text string, w float64) bm25.Term { return bm25.Term{Text: text, Weight: w} }

func TestAnalyseQuery(t *testing.T) {
	tests := []struct {
		text string
		r    Ranking
		want []bm25.Term
	}{
		{"What kind of pottery does Caroline make?", PlainBM25(),
			[]bm25.Term{term("kind", 1), term("potteri", 1), term("carolin", 1), term("make", 1)}},
		{"What kind of pottery does Caroline make?", Ranking{K1: 1, QueryWords: true, NameWeight: 2},
			[]bm25.Term{term("potteri", 1), term("carolin", 2), term("make", 1)}},
		// A capital that starts a sentence says nothing.
		{"Pottery? Caroline. Tell me", Ranking{K1: 1, NameWeight: 2},
			[]bm25.Term{term("potteri", 1), term("carolin", 1), term("tell", 1)}},
		{"Melanie's kids and Caroline's", Ranking{K1: 1, NameWeight: 3},
			[]bm25.Term{term("melani", 1), term("kid", 1), term("carolin", 3)}},
		// Only boilerplate: the words stay.
		{"tell me", Ranking{K1: 1, QueryWords: true}, []bm25.Term{term("tell", 1)}},
	}
	for _, tc := range tests {
		got, _ := analyseQuery(bm25.DefaultConfig().Analysis(), tc.text, tc.r)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q %+v: %v, want %v", tc.text, tc.r, got, tc.want)
		}
	}
}

func TestRankingValidate(t *testing.T) {
	for _, r := range []Ranking{PlainBM25(), DefaultRanking()} {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	bad := Ranking{K1: -1, B: 2, NameWeight: 11, Expansion: Expansion{Terms: 5}, Context: Context{Neighbour: 3}}
	err := bad.Validate()
	for _, want := range []string{"k1", "b 2", "name_weight", "expansion.docs", "expansion.weight", "context.window", "context.neighbour"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
	if _, err := RankingByName("bm25"); err != nil {
		t.Error(err)
	}
	if _, err := RankingByName("neural"); err == nil {
		t.Error("unknown ranking name accepted")
	}
}

// TestSearchContext: the served path. A session where the answer ("Yes,
// it was amazing! The glaze came out blue.") shares no word with the
// question, and another session. Plain BM25 finds only the question's
// turn; the context stage brings the reply in right after it, scored
// 0 + 0.5·1 + 0.5·1 = 1.0 against the hit's 1 + 0 + 0.5·1 = 1.5 (the
// next turn, "Nice", two places off, stays out at window 1).
func TestSearchContext(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, openStore(t, ""), nil, DefaultConfig())
	turn := func(id, source, text string, min int) store.Item {
		return store.Item{Memory: memory.Memory{Namespace: "u", ID: id, Text: text, Source: source, Time: day0.Add(time.Duration(min) * time.Minute)}}
	}
	mustAdd(t, e,
		turn("t1", "chat-1", "Caroline: did the pottery class go well?", 0),
		turn("t2", "chat-1", "Melanie: Yes, it was amazing! The glaze came out blue.", 1),
		turn("t3", "chat-1", "Caroline: Nice", 2),
		turn("t4", "chat-2", "Melanie: my kids went camping", 0),
	)
	plain := PlainBM25()
	ctxRanking := Ranking{K1: 1.2, B: 0.75, Context: Context{Window: 1, Neighbour: 0.5, Source: 0.5}}
	tests := []struct {
		name    string
		ranking *Ranking
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
	_, err = e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "x", Ranking: &Ranking{K1: -1, B: 0.5}}})
	if err == nil || !strings.Contains(err.Error(), "ranking: k1") {
		t.Errorf("bad ranking: %v", err)
	}
}
