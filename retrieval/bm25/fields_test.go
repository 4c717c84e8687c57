package bm25

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/lexical"
)

// TestFieldsWorkedExample checks BM25F against values derived by hand.
// Text k1 1, b 0 (every B_text is 1); field 0 (a speaker) weight 2.
//
//	d1 text "ann pottery"        speaker [ann]        time [@m10]
//	d2 text "ann pottery"        speaker [bob]          time [@m11]
//	d3 text "bob pottery class"    speaker [bob, smith]
//	N = 3; speaker lengths 1, 1, 2: average 4/3
//
// Query "ann": documents with it in any field d1, d2 (udf 2), idf =
// ln(1 + 1.5/2.5) = ln 1.6 = 0.47000362924573563.
//
//	b_s 0: d1 tf~ = 1 + 2·1 = 3, 3·2/(1 + 3) = 1.5 → 0.7050054438686034
//	       d2 tf~ = 1,           1·2/(1 + 1) = 1   → 0.47000362924573563
//
// Plain BM25 ties them (both tf 1, same length): the speaker breaks the
// tie towards the one who said it.
//
// Query "bob": udf 2 (d2 by its speaker, d3), idf ln 1.6.
//
//	b_s 0:   d3 tf~ = 1 + 2 = 3   → 1.5·idf = 0.7050054438686034
//	         d2 tf~ = 2           → 2·2/3·idf = 0.6266715056609808
//	b_s 0.5: B_s(d2) = 0.5 + 0.5·1/(4/3) = 0.875, B_s(d3) = 0.5 + 0.5·2/(4/3) = 1.25
//	         d3 tf~ = 1 + 2/1.25 = 2.6           → 2.6·2/3.6·idf = 0.6788941311327292
//	         d2 tf~ = 2/0.875 = 2.2857142857142856 → ·2/3.2857…·idf = 0.6539180928636322
//
// Plain BM25 finds d3 alone (df 1, idf ln(1 + 2.5/1.5) = 0.9808292530117263).
//
// Query "@m10", a term of field 1 only, weight 1: udf 1, idf 0.9808292530117263;
// d1 tf~ = 1, score idf. With field 1's weight 0 it finds nothing.
func TestFieldsWorkedExample(t *testing.T) {
	x := newIndex(t)
	x.AddFields("d1", "ann pottery", Fields{{"ann"}, {"@m10"}})
	x.AddFields("d2", "ann pottery", Fields{{"bob"}, {"@m11"}})
	x.AddFields("d3", "bob pottery class", Fields{{"bob", "smith"}})
	cfg := Config{K1: 1, B: 0}
	speaker := func(b float64) FieldParams {
		return FieldParams{Weight: [NumFields]float64{2, 0}, B: [NumFields]float64{b, 0}}
	}
	q := func(text string) []Term { return []Term{{Text: text, Weight: 1}} }
	tests := []struct {
		name string
		got  []Hit
		want []Hit
	}{
		{"ann, speaker", x.SearchFields(q("ann"), 10, cfg, speaker(0)),
			[]Hit{{"d1", 0.7050054438686034, 1}, {"d2", 0.47000362924573563, 2.0 / 3}}},
		{"ann, plain", x.SearchTerms(q("ann"), 10, cfg),
			[]Hit{{"d1", 0.47000362924573563, 1}, {"d2", 0.47000362924573563, 1}}},
		{"bob, speaker b 0", x.SearchFields(q("bob"), 10, cfg, speaker(0)),
			[]Hit{{"d3", 0.7050054438686034, 1}, {"d2", 0.6266715056609808, 0.6266715056609808 / 0.7050054438686034}}},
		{"bob, speaker b 0.5", x.SearchFields(q("bob"), 10, cfg, speaker(0.5)),
			[]Hit{{"d3", 0.6788941311327292, 1}, {"d2", 0.6539180928636322, 0.6539180928636322 / 0.6788941311327292}}},
		{"bob, plain", x.SearchTerms(q("bob"), 10, cfg), []Hit{{"d3", 0.9808292530117263, 1}}},
		{"@m10, time", x.SearchFields(q("@m10"), 10, cfg, FieldParams{Weight: [NumFields]float64{0, 1}}),
			[]Hit{{"d1", 0.9808292530117263, 1}}},
		{"@m10, speaker only", x.SearchFields(q("@m10"), 10, cfg, speaker(0)), nil},
		{"@m10, plain", x.SearchTerms(q("@m10"), 10, cfg), nil},
	}
	for _, tc := range tests {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.got, tc.want)
			continue
		}
		for i := range tc.want {
			if g, w := tc.got[i], tc.want[i]; g.ID != w.ID || !near(g.Score, w.Score) || !near(g.Norm, w.Norm) {
				t.Errorf("%s[%d] = %+v, want %+v", tc.name, i, g, w)
			}
		}
	}
	// A term in the text only scores exactly as SearchTerms does when
	// its idf is the same (no document has it in a field only).
	if got, want := x.SearchFields(q("potteri"), 10, cfg, speaker(0)), x.SearchTerms(q("potteri"), 10, cfg); !slices.Equal(got, want) {
		t.Errorf("text-only term: %+v, SearchTerms %+v", got, want)
	}
	// Fields are not text: expansion's DocTerms and IDF see the text.
	if got := x.DocTerms("d3"); !slices.Equal(got, []string{"bob", "class", "potteri"}) {
		t.Errorf("DocTerms(d3) = %v", got)
	}
	if _, ok := x.IDF("@m10"); ok {
		t.Error("IDF of a field-only term: want none (no text has it)")
	}
	// Deleting the documents takes their field terms away.
	for _, id := range []string{"d1", "d2", "d3"} {
		x.Delete(id)
	}
	checkInvariants(t, x)
	if len(x.terms) != 0 || x.fieldTotal != ([NumFields]int{}) {
		t.Errorf("after deleting all: %d terms, field totals %v", len(x.terms), x.fieldTotal)
	}
}

func TestFieldParamsValidate(t *testing.T) {
	if err := (FieldParams{Weight: [NumFields]float64{2, 10}, B: [NumFields]float64{0, 1}}).Validate(); err != nil {
		t.Error(err)
	}
	err := FieldParams{Weight: [NumFields]float64{-1, 11}, B: [NumFields]float64{2, -0.1}}.Validate()
	for _, want := range []string{"field 0 weight -1", "field 1 weight 11", "field 0 b 2", "field 1 b -0.1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
}

// TestFieldsMatchOracle runs random histories of documents with and
// without fields (speakers that are also words of the texts, time-like
// terms in the other field) against the map-based BM25F, with deletes,
// compaction and renumbering; plain searches must still see the text
// alone. On amd64 the scores must agree bit for bit.
func TestFieldsMatchOracle(t *testing.T) {
	speakers := lexical.Terms("apple kiwi ann bob carol") // analysed, as retrieval's; two are vocab words
	times := []string{"@y2023", "@y2024", "@m1", "@m2", "@m3", "@d1-5"}
	params := []FieldParams{
		{Weight: [NumFields]float64{1, 1}},
		{Weight: [NumFields]float64{2, 0}, B: [NumFields]float64{0.5, 0}},
		{Weight: [NumFields]float64{0, 3}, B: [NumFields]float64{0, 1}},
		{Weight: [NumFields]float64{0.25, 0.5}, B: [NumFields]float64{1, 0.3}},
	}
	for _, c := range []struct {
		name    string
		seed    int64
		n       int
		ids     int
		pDelete float64
		cfg     Config
	}{
		{"default", 21, 2000, 150, 0.2, DefaultConfig()},
		{"delete-heavy", 22, 3000, 300, 0.6, DefaultConfig()},
		{"k1-0-b-1", 23, 800, 80, 0.3, Config{K1: 0, B: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(c.seed))
			z := rand.NewZipf(r, 1.1, 2, 200)
			p := newPair(t, c.cfg)
			pick := func(from []string, most int) []string {
				out := make([]string, r.Intn(most+1))
				for i := range out {
					out[i] = from[r.Intn(len(from))]
				}
				return out
			}
			for step := range c.n {
				id := fmt.Sprintf("m%03d", r.Intn(c.ids))
				switch u := r.Float64(); {
				case u < c.pDelete:
					p.del(t, id)
				case u < c.pDelete+0.2:
					p.add(id, zipfText(r, z, 12)) // no fields
				default:
					p.addFields(id, zipfText(r, z, 12), Fields{pick(speakers, 2), pick(times, 3)})
				}
				if step%89 == 0 {
					for i := range c.ids / 2 {
						p.del(t, fmt.Sprintf("m%03d", (i*7+step)%c.ids))
					}
				}
				if step%11 == 0 {
					p.state(t)
					q := zipfText(r, z, 3)
					p.search(t, q, 20)
					var terms []Term
					for _, w := range append(lexical.QueryTerms(q), pick(append(speakers, times...), 3)...) {
						terms = append(terms, Term{Text: w, Weight: []float64{1, 1, 0.5, 2}[r.Intn(4)]})
					}
					for _, k := range []int{1, 10, 1 << 20} {
						p.searchFields(t, terms, k, params[r.Intn(len(params))])
					}
				}
			}
			p.state(t)
			if p.mismatches > 0 && runtime.GOARCH == "amd64" {
				t.Errorf("%d scores differ from the oracle's in the last bits", p.mismatches)
			}
		})
	}
}

// TestFieldsManyBlocks spans several blocks of document numbers, dense
// and sparse, with a term's field postings in blocks its text postings
// miss, and deletes enough to renumber.
func TestFieldsManyBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 38k documents")
	}
	n := blockDocs + 5000
	r := rand.New(rand.NewSource(24))
	z := rand.NewZipf(r, 1.3, 1, 3000)
	p := newPair(t, DefaultConfig())
	speakers := lexical.Terms("apple banana ann bob")
	fp := FieldParams{Weight: [NumFields]float64{2, 1}, B: [NumFields]float64{0.5, 0}}
	check := func() {
		t.Helper()
		p.state(t)
		for _, q := range [][]string{{"appl"}, {"appl", "ann"}, {"bob", "@y2024"}, {"@y2023"}, {"banana", "cherri", "ann"}} {
			terms := make([]Term, len(q))
			for i, w := range q {
				terms[i] = Term{Text: w, Weight: 1}
			}
			for _, k := range []int{1, 100, 5000} {
				p.searchFields(t, terms, k, fp)
			}
		}
	}
	for i := range n {
		f := Fields{{speakers[i%len(speakers)]}, {"@y2023"}}
		if i > blockDocs/2 && i < blockDocs+100 {
			f[1] = []string{"@y2024"} // sparse in one block, dense in none
		}
		p.addFields(fmt.Sprintf("d%06d", i), zipfText(r, z, 3), f)
	}
	check()
	for i := range n {
		if i < blockDocs && i%8 != 0 || i%5 == 0 {
			p.del(t, fmt.Sprintf("d%06d", i))
		}
	}
	check()
}
