package lexical

import (
	"math"
	"slices"
	"testing"
)

func TestTermsExported(t *testing.T) {
	if got, want := Terms("The Painted PAINTINGS 我喜欢"), []string{"the", "paint", "paint", "我", "我喜", "喜", "喜欢", "欢"}; !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	if got := Terms(""); len(got) != 0 {
		t.Errorf("Terms(\"\") = %q, want none", got)
	}
	if got, want := QueryTerms("the cats and the cat"), []string{"cat"}; !slices.Equal(got, want) {
		t.Errorf("QueryTerms = %q, want %q", got, want)
	}
	if got, want := QueryTerms("The Who"), []string{"the", "who"}; !slices.Equal(got, want) {
		t.Errorf("QueryTerms(all stopwords) = %q, want %q", got, want)
	}
}

// TestTermsAgreeWithScore recomputes BM25 from Terms/QueryTerms and checks
// it equals what Score computes: token counts, raw scores and mapped scores.
func TestTermsAgreeWithScore(t *testing.T) {
	docs := []string{
		"The cat sat on the mat with another cat.",
		"Dogs are running in the park; a dog barks.",
		"我喜欢画画，也喜欢猫。",
		"the who",
		"",
		"Cats' toys and CAT food",
	}
	queries := []string{"cat", "running dogs", "喜欢猫", "the who", "", "nothing matches zzz"}
	s := Default()
	k1, b := s.Config().K1, s.Config().B
	for _, q := range queries {
		res := s.Score(q, docs)
		qt := QueryTerms(q)
		total := 0
		tfs := make([]map[string]int, len(docs))
		for i, d := range docs {
			ts := Terms(d)
			if res[i].Tokens != len(ts) {
				t.Errorf("doc %d: Score tokens %d, len(Terms) %d", i, res[i].Tokens, len(ts))
			}
			total += len(ts)
			tfs[i] = map[string]int{}
			for _, term := range ts {
				tfs[i][term]++
			}
		}
		avg := float64(total) / float64(len(docs))
		raws := make([]float64, len(docs))
		maxRaw := 0.0
		for _, term := range qt {
			df := 0
			for i := range docs {
				if tfs[i][term] > 0 {
					df++
				}
			}
			w := IDF(len(docs), df)
			maxRaw += w * (k1 + 1)
			for i := range docs {
				if tf := float64(tfs[i][term]); tf > 0 {
					raws[i] += w * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(len(Terms(docs[i])))/avg))
				}
			}
		}
		for i := range docs {
			if math.Abs(res[i].Raw-raws[i]) > 1e-9 {
				t.Errorf("query %q doc %d: Score raw %v, recomputed from Terms %v", q, i, res[i].Raw, raws[i])
			}
			if want := s.mapScore(raws[i], maxRaw); math.Abs(res[i].Score-want) > 1e-9 {
				t.Errorf("query %q doc %d: Score %v, recomputed from Terms %v", q, i, res[i].Score, want)
			}
		}
	}
}
