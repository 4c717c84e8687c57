package lexrank

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/index"
)

// day0 is a fixed time the order tests place memories from.
var day0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

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
		want   []Hit
	}{
		{1, 10, []Hit{{"a", 1.5, 2}, {"b", 1, 0}, {"d", 0.75, 1}}},
		{2, 10, []Hit{{"a", 1.5, 2}, {"b", 1, 0}, {"c", 1, 0}, {"d", 0.75, 1}}},
		{2, 2, []Hit{{"a", 1.5, 2}, {"b", 1, 0}}},
	}
	for _, tc := range tests {
		got := withContext(o, hits, Context{Window: tc.window, Neighbour: 0.5, Source: 0.5}, tc.depth, nil)
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

func TestQueryTimeTerms(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"When did Melanie go camping in June?", []string{"@m6"}},
		{"What did Mel paint in July 2023?", []string{"@m7", "@y2023"}},
		{"What painting did Melanie show on October 13, 2023?", []string{"@m10", "@d10-13", "@y2023"}},
		{"What did Gina find on 1 February, 2023?", []string{"@m2", "@d2-1", "@y2023"}},
		{"the 3rd of august", []string{"@m8", "@d8-3"}},
		{"on Oct 13th", []string{"@m10", "@d10-13"}},
		{"2023-05-08 notes", []string{"@y2023", "@m5", "@d5-8"}},
		{"in ２０２３", []string{"@y2023"}}, // full-width digits
		// May and March only as months.
		{"May I ask what you may remember?", nil},
		{"What happened in May?", []string{"@m5"}},
		{"May 3 was sunny", []string{"@m5", "@d5-3"}},
		{"we march on", nil},
		{"Since March", []string{"@m3"}},
		// Abbreviations only next to a number.
		{"Dec said he would sep the mar", nil},
		{"Dec 24", []string{"@m12", "@d12-24"}},
		// Not dates: relative words, weekdays, durations, other numbers.
		{"What did she do yesterday, last Friday, or last week?", nil},
		// A number that could be a year is read as one (2000 dollars too):
		// the price of reading "in 2022" without a grammar.
		{"about 3000 people, 1850 and 2000 dollars", []string{"@y2000"}},
		{"5/8/2023", []string{"@y2023"}},
		{"version 10.5 of it", nil},
		// Chinese.
		{"2024年3月15日去了哪里", []string{"@y2024", "@m3", "@d3-15"}},
		{"三月份的计划", []string{"@m3"}},
		{"十二月二十五号", []string{"@m12", "@d12-25"}},
		{"学了三个月日语", nil},
		{"十三月", nil},
	}
	for _, tc := range tests {
		if got := queryTimeTerms(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("queryTimeTerms(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestFieldsValidate(t *testing.T) {
	ok := Ranking{K1: 1, Fields: Fields{Speaker: 10, Time: 0.5, SpeakerB: 1}}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
	err := Ranking{K1: 1, Fields: Fields{Speaker: -1, Time: 11, SpeakerB: 2, TimeB: -0.5}}.Validate()
	for _, want := range []string{"fields.speaker -1", "fields.time 11", "fields.speaker_b 2", "fields.time_b -0.5"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
