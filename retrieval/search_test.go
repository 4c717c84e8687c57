package retrieval

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

func ptr[T any](v T) *T { return &v }

func TestSearchPipeline(t *testing.T) {
	ctx := context.Background()
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	at := func(ns, id, text string, age time.Duration) store.Item {
		return store.Item{Memory: memory.Memory{Namespace: ns, ID: id, Text: text, Time: day0.Add(-age)}}
	}
	week := 7 * 24 * time.Hour
	mustAdd(t, e,
		at("u", "old", "user coffee order: oat latte", 10*week),
		at("u", "new", "user coffee order: flat white", 0),
		at("u", "dup1", "the user likes coffee with oat milk", week),
		at("u", "dup2", "the user likes coffee with oat milk daily", week),
		at("u", "tea", "user drinks coffee rarely, prefers green tea", week),
		at("u", "noise", "meeting at noon about the budget", 0),
	)
	rr := fixedReranker{by: map[string]float64{"oat latte": 0.9, "flat white": 0.88, "oat milk": 0.8, "green tea": 0.6, "budget": 0.01}}

	tests := []struct {
		name string
		req  SearchRequest
		want []string
		// check runs extra assertions on the result.
		check func(t *testing.T, r SearchResult)
	}{
		{
			name: "retrieval only",
			req:  SearchRequest{Query: Query{Namespace: "u", Text: "coffee order"}, TopK: 2},
			want: []string{"new", "old"},
		},
		{
			name: "rerank orders by probability",
			req:  SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: rr},
			want: []string{"old", "new", "dup1", "dup2", "tea"},
			check: func(t *testing.T, r SearchResult) {
				if r.Reranked != 5 || r.Results[0].Scores[post.ScoreRerank] != 0.9 {
					t.Fatalf("reranked %d, top scores %v", r.Reranked, r.Results[0].Scores)
				}
				if _, ok := r.Results[0].Scores[post.ScoreBM25]; !ok {
					t.Fatal("retrieval scores lost after rerank")
				}
			},
		},
		{
			name: "threshold drops below 0.7",
			req:  SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: rr, Threshold: ptr(0.7)},
			want: []string{"old", "new", "dup1", "dup2"},
			check: func(t *testing.T, r SearchResult) {
				if r.AboveThreshold != 4 {
					t.Fatalf("AboveThreshold %d", r.AboveThreshold)
				}
			},
		},
		{
			// Recency w=0.5: old = 0.9*0.5 + 2^-10*0.5 ≈ 0.4505; new = 0.88*0.5 + 1*0.5 = 0.94.
			name: "recency lifts the new memory",
			req: SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: rr, Threshold: ptr(0.7),
				Recency: &post.RecencyConfig{Weight: 0.5, HalfLife: week}, Now: day0},
			want: []string{"new", "dup1", "dup2", "old"},
			check: func(t *testing.T, r SearchResult) {
				if got := r.Results[0].Score; !near(got, 0.94) {
					t.Fatalf("new scored %v, want 0.94", got)
				}
				old := r.Results[3]
				if !near(old.Score, 0.5*0.9+0.5*0.0009765625) || !near(old.Scores[post.ScoreRecency], 0.0009765625) {
					t.Fatalf("old: blended %v, recency %v", old.Score, old.Scores[post.ScoreRecency])
				}
			},
		},
		{
			name: "MMR spreads near-duplicates apart",
			req: SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: fixedReranker{by: map[string]float64{
				"oat milk": 0.9, "oat latte": 0.7, "flat white": 0.69, "green tea": 0.68, "budget": 0.01}},
				MMR: &post.MMRConfig{Lambda: 0.5, Window: 20}, TopK: 3},
			// dup2 contains "oat milk" too (0.9) but is near-identical to dup1.
			want: []string{"dup1", "tea", "new"},
			check: func(t *testing.T, r SearchResult) {
				if r.Rest != nil {
					t.Fatalf("rest %v without KeepRest", candIDs(r.Rest))
				}
			},
		},
		{
			// What evaluation ranks: MMR's picks, then what it left out,
			// in score order (dup1 and dup2 tie at 0.9; IDs break it).
			name: "KeepRest returns what MMR left out",
			req: SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: fixedReranker{by: map[string]float64{
				"oat milk": 0.9, "oat latte": 0.7, "flat white": 0.69, "green tea": 0.68, "budget": 0.01}},
				MMR: &post.MMRConfig{Lambda: 0.5, Window: 20}, TopK: 3, KeepRest: true},
			want: []string{"dup1", "tea", "new"},
			check: func(t *testing.T, r SearchResult) {
				if got := fmt.Sprint(candIDs(r.Rest)); got != "[dup2 old]" {
					t.Fatalf("rest %s, want [dup2 old]", got)
				}
			},
		},
		{
			name: "KeepRest returns what top k cut, past the threshold only",
			req:  SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: rr, Threshold: ptr(0.7), TopK: 2, KeepRest: true},
			want: []string{"old", "new"},
			check: func(t *testing.T, r SearchResult) {
				if got := fmt.Sprint(candIDs(r.Rest)); got != "[dup1 dup2]" {
					t.Fatalf("rest %s, want [dup1 dup2] (tea is under the threshold)", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.Search(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(candIDs(r.Results)); got != fmt.Sprint(tc.want) {
				t.Fatalf("results %s, want %v", got, tc.want)
			}
			if r.Level != LevelBM25 {
				t.Fatalf("level %s", r.Level)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	ctx := context.Background()
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	mustAdd(t, e, item("u", "1", "coffee"))
	bad := []struct {
		name string
		req  SearchRequest
		want error
	}{
		{"blank query", SearchRequest{Query: Query{Namespace: "u", Text: "  \t"}}, ErrInvalid},
		{"bad namespace", SearchRequest{Query: Query{Namespace: "../etc", Text: "x"}}, ErrInvalid},
		{"negative top_k", SearchRequest{Query: Query{Namespace: "u", Text: "x"}, TopK: -1}, ErrInvalid},
		{"threshold above 1", SearchRequest{Query: Query{Namespace: "u", Text: "x"}, Threshold: ptr(1.5)}, ErrInvalid},
		{"threshold without a reranker", SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Threshold: ptr(0.01)}, ErrInvalid},
		{"recency without now", SearchRequest{Query: Query{Namespace: "u", Text: "x"}, Recency: &post.RecencyConfig{Weight: 0.1, HalfLife: time.Hour}}, ErrInvalid},
		{"bad MMR lambda", SearchRequest{Query: Query{Namespace: "u", Text: "x"}, MMR: &post.MMRConfig{Lambda: 2, Window: 5}}, ErrInvalid},
		{"vector without index", SearchRequest{Query: Query{Namespace: "u", Text: "x", Vector: []float32{1}}}, ErrNoVectors},
		{"reranker fails", SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: fixedReranker{fail: errors.New("boom")}}, ErrRerank},
		{"reranker gives non-probability", SearchRequest{Query: Query{Namespace: "u", Text: "coffee"}, Rerank: fixedReranker{by: map[string]float64{"coffee": 2}}}, ErrRerank},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.Search(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestChineseQueries(t *testing.T) {
	ctx := context.Background()
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	mustAdd(t, e,
		item("zh", "1", "我下周三要去上海出差，住在外滩附近的酒店"),
		item("zh", "2", "用户喜欢喝不加糖的绿茶"),
		item("zh", "3", "我的 MacBook 键盘坏了，周五送去修理"),
		item("zh", "4", "周末和朋友去北京爬长城"),
	)
	for _, tc := range []struct{ q, want string }{
		{"我什么时候去上海？", "1"},
		{"用户喝什么茶", "2"},
		{"macbook 修理", "3"},
		{"长城", "4"},
	} {
		r, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "zh", Text: tc.q}, TopK: 1})
		if err != nil || len(r.Results) != 1 || r.Results[0].ID != tc.want {
			t.Errorf("%q: got %v, %v; want %s", tc.q, candIDs(r.Results), err, tc.want)
		}
	}
}
