package bm25

import (
	"cmp"
	"math"
	"slices"

	"github.com/rerankd/rerankd/lexical"
)

// oracleIndex is the original map-based index (term → document ID →
// posting, scores accumulated in a map), kept verbatim in logic as the
// reference the compact index must reproduce. Not safe for concurrent use;
// only tests build it.
type oracleIndex struct {
	cfg      Config
	postings map[string]map[string]oraclePosting
	docs     map[string]oracleDoc
	totalLen int
}

type oracleDoc struct {
	length int
	terms  []string
}

type oraclePosting struct {
	tf     int32
	docLen int32
}

func newOracle(cfg Config) *oracleIndex {
	return &oracleIndex{
		cfg:      cfg,
		postings: make(map[string]map[string]oraclePosting),
		docs:     make(map[string]oracleDoc),
	}
}

func (x *oracleIndex) Len() int { return len(x.docs) }

func (x *oracleIndex) Has(id string) bool { _, ok := x.docs[id]; return ok }

func (x *oracleIndex) Add(id, text string) {
	terms := lexical.Terms(text)
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		if tf[t] < math.MaxInt32 {
			tf[t]++
		}
	}
	d := oracleDoc{length: min(len(terms), math.MaxInt32), terms: make([]string, 0, len(tf))}
	for t := range tf {
		d.terms = append(d.terms, t)
	}
	x.Delete(id)
	for t, n := range tf {
		p := x.postings[t]
		if p == nil {
			p = make(map[string]oraclePosting)
			x.postings[t] = p
		}
		p[id] = oraclePosting{tf: n, docLen: int32(d.length)}
	}
	x.docs[id] = d
	x.totalLen += d.length
}

func (x *oracleIndex) Delete(id string) bool {
	d, ok := x.docs[id]
	if !ok {
		return false
	}
	for _, t := range d.terms {
		p := x.postings[t]
		delete(p, id)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	delete(x.docs, id)
	x.totalLen -= d.length
	return true
}

func (x *oracleIndex) Search(query string, k int) []Hit {
	if k <= 0 {
		return nil
	}
	qterms := lexical.QueryTerms(query)
	if len(qterms) == 0 {
		return nil
	}
	n := len(x.docs)
	if n == 0 {
		return nil
	}
	k1, b := x.cfg.K1, x.cfg.B
	avgLen := float64(x.totalLen) / float64(n)
	scores := make(map[string]float64)
	for _, t := range qterms {
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		df := len(p)
		w := math.Log1p((float64(n-df) + 0.5) / (float64(df) + 0.5))
		for id, f := range p {
			tf := float64(f.tf)
			lenNorm := 1.0
			if avgLen > 0 {
				lenNorm = 1 - b + b*float64(f.docLen)/avgLen
			}
			scores[id] += w * tf * (k1 + 1) / (tf + k1*lenNorm)
		}
	}
	// The original kept the k best in a heap; sorting everything gives the
	// same k hits in the same order and is obviously right.
	hits := make([]Hit, 0, len(scores))
	for id, s := range scores {
		hits = append(hits, Hit{ID: id, Score: s})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	hits = hits[:min(k, len(hits))]
	if len(hits) == 0 {
		return nil
	}
	maxScore := hits[0].Score
	if maxScore > 0 && !math.IsInf(maxScore, 0) {
		for i := range hits {
			hits[i].Norm = min(max(hits[i].Score/maxScore, 0), 1)
		}
	}
	return hits
}
