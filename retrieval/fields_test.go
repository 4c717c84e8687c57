package retrieval

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

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

func TestMemoryTimeTerms(t *testing.T) {
	ny := time.FixedZone("UTC-4", -4*3600)
	tests := []struct {
		at   time.Time
		want []string
	}{
		{time.Date(2023, 10, 13, 9, 0, 0, 0, time.UTC), []string{"@y2023", "@m10", "@d10-13"}},
		// The offset the memory was written with decides the day: in UTC
		// this is 1 June.
		{time.Date(2023, 5, 31, 23, 30, 0, 0, ny), []string{"@y2023", "@m5", "@d5-31"}},
		{time.Time{}, nil},
	}
	for _, tc := range tests {
		if got := index.TimeTerms(memory.Memory{Time: tc.at}); !slices.Equal(got, tc.want) {
			t.Errorf("TimeTerms(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

// TestSearchFields: the served path, worked by hand. k1 1, b 0 (every
// text length normalisation is 1), N = 3:
//
//	a "I love pottery"                   speaker Caroline  2023-05-08
//	b "Caroline, your pottery is lovely" speaker Melanie   2023-05-08
//	c "I painted a lake at sunrise"      speaker Melanie   2023-07-14
//
// "Caroline pottery", plain: potteri df 2 (idf L = ln 1.6 = 0.4700),
// carolin df 1 (idf H = ln(1 + 2.5/1.5) = 0.9808): b = L + H = 1.4508,
// a = L = 0.4700. With the speaker field at weight 2: carolin is in a's
// speaker and b's text (udf 2, idf L); a's tf~ = 2·1 = 2, so carolin adds
// 2·2/3·L and a = L + 4/3·L = 1.0967, b = L + L = 0.9400: what Caroline
// said comes before what was said to her.
//
// "What happened on 8 May 2023?": no text has a term of it, so plain BM25
// finds nothing. The time field reads @m5, @d5-8 (udf 2, idf L each) and
// @y2023 (udf 3, idf ln(1 + 0.5/3.5) = 0.1335): a = b = 2L + 0.1335 =
// 1.0735 (a first by ID), c = 0.1335.
func TestSearchFields(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, openStore(t, ""), nil, DefaultConfig())
	mem := func(id, text, speaker string, at time.Time) store.Item {
		return store.Item{Memory: memory.Memory{Namespace: "u", ID: id, Text: text, Time: at,
			Metadata: map[string]string{"speaker": speaker}}}
	}
	may8 := time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC)
	mustAdd(t, e,
		mem("a", "I love pottery", "Caroline", may8),
		mem("b", "Caroline, your pottery is lovely", "Melanie", may8.Add(time.Minute)),
		mem("c", "I painted a lake at sunrise", "Melanie", time.Date(2023, 7, 14, 10, 0, 0, 0, time.UTC)),
	)
	const L, H, Y = 0.47000362924573563, 0.9808292530117263, 0.13353139262452257
	plain := Ranking{K1: 1, B: 0}
	speaker := Ranking{K1: 1, B: 0, Fields: Fields{Speaker: 2}}
	when := Ranking{K1: 1, B: 0, Fields: Fields{Time: 1}}
	tests := []struct {
		name    string
		query   string
		ranking Ranking
		ids     []string
		scores  []float64
	}{
		{"plain", "Caroline pottery", plain, []string{"b", "a"}, []float64{L + H, L}},
		{"speaker", "Caroline pottery", speaker, []string{"a", "b"}, []float64{L + 4.0/3*L, 2 * L}},
		{"date, plain", "What happened on 8 May 2023?", plain, nil, nil},
		{"date, time field", "What happened on 8 May 2023?", when, []string{"a", "b", "c"}, []float64{2*L + Y, 2*L + Y, Y}},
	}
	for _, tc := range tests {
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: tc.query, Ranking: &tc.ranking}})
		if err != nil {
			t.Fatal(err)
		}
		if got := candIDs(res.Results); !slices.Equal(got, tc.ids) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.ids)
			continue
		}
		for i, c := range res.Results {
			key := post.ScoreBM25
			if tc.ranking.Fields.on() {
				key = post.ScoreLexical // BM25F changes the score
			}
			if !near(c.Scores[key], tc.scores[i]) {
				t.Errorf("%s: %s %s = %v, want %v", tc.name, c.ID, key, c.Scores[key], tc.scores[i])
			}
		}
	}

	// Without a speaker key the speaker field is empty: the ranking is
	// plain BM25's, with the same idf.
	cfg := DefaultConfig()
	cfg.SpeakerKey = ""
	e2 := newEngine(t, openStore(t, ""), nil, cfg)
	mustAdd(t, e2,
		mem("a", "I love pottery", "Caroline", may8),
		mem("b", "Caroline, your pottery is lovely", "Melanie", may8),
	)
	res, err := e2.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "Caroline pottery", Ranking: &speaker}})
	if err != nil {
		t.Fatal(err)
	}
	if got := candIDs(res.Results); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("no speaker key: %v, want b, a", got)
	}

	// A rewrite moves the memory to its new speaker; a delete removes it.
	mustAdd(t, e, mem("b", "Caroline, your pottery is lovely", "Caroline", may8))
	res, err = e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "Caroline pottery", Ranking: &speaker}})
	if err != nil {
		t.Fatal(err)
	}
	if got := candIDs(res.Results); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("after b's speaker became Caroline: %v, want b (text and speaker), a", got)
	}
	if err := e.Delete("u", "a"); err != nil {
		t.Fatal(err)
	}
	res, err = e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: "8 May 2023", Ranking: &when}})
	if err != nil {
		t.Fatal(err)
	}
	if got := candIDs(res.Results); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("after deleting a: %v, want b, c", got)
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
	cfg := DefaultConfig()
	cfg.SpeakerKey = strings.Repeat("k", memory.MaxMetadataKeyLen+1)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "SpeakerKey") {
		t.Errorf("long SpeakerKey: %v", err)
	}
}
