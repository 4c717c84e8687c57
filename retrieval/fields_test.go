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
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	mem := func(id, text, speaker string, at time.Time) store.Item {
		return store.Item{Memory: memory.Memory{Namespace: "u", ID: id, Text: text, Time: at,
			Metadata: memory.Strings(map[string]string{"speaker": speaker})}}
	}
	may8 := time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC)
	mustAdd(t, e,
		mem("a", "I love pottery", "Caroline", may8),
		mem("b", "Caroline, your pottery is lovely", "Melanie", may8.Add(time.Minute)),
		mem("c", "I painted a lake at sunrise", "Melanie", time.Date(2023, 7, 14, 10, 0, 0, 0, time.UTC)),
	)
	const L, H, Y = 0.47000362924573563, 0.9808292530117263, 0.13353139262452257
	plain := lexrank.Ranking{K1: 1, B: 0}
	speaker := lexrank.Ranking{K1: 1, B: 0, Fields: lexrank.Fields{Speaker: 2}}
	when := lexrank.Ranking{K1: 1, B: 0, Fields: lexrank.Fields{Time: 1}}
	tests := []struct {
		name    string
		query   string
		ranking lexrank.Ranking
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
			if tc.ranking.Fields.On() {
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
	e2 := newService(t, openStore(t, ""), nil, cfg)
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

func TestSpeakerKeyValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SpeakerKey = strings.Repeat("k", memory.MaxMetadataKeyLen+1)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "SpeakerKey") {
		t.Errorf("long SpeakerKey: %v", err)
	}
}
