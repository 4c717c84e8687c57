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
	// fieldTotal sums the live documents' field lengths (BM25F).
	fieldTotal [NumFields]int
}

type oracleDoc struct {
	length int
	terms  []string
	// fields are the document's field terms with their frequencies, and
	// fieldLen their lengths (BM25F; not in the original).
	fields   [NumFields]map[string]int32
	fieldLen [NumFields]int
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

func (x *oracleIndex) Add(id, text string) { x.AddFields(id, text, Fields{}) }

func (x *oracleIndex) AddFields(id, text string, fields Fields) {
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
	for f, ft := range fields {
		d.fieldLen[f] = min(len(ft), math.MaxUint16)
		x.fieldTotal[f] += d.fieldLen[f]
		if len(ft) > 0 {
			d.fields[f] = map[string]int32{}
			for _, t := range ft {
				d.fields[f][t]++
			}
		}
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
	for f, n := range d.fieldLen {
		x.fieldTotal[f] -= n
	}
	return true
}

// SearchFields is BM25F over whole maps, written from the formula of
// Index.SearchFields: per term, the documents with it in the text or a
// weighted field, the frequencies combined before saturation; a term
// with no posting in a weighted field scores as in Search, with the
// idf of every document that has it in any field.
func (x *oracleIndex) SearchFields(terms []Term, k int, p Config, fp FieldParams) []Hit {
	n := len(x.docs)
	if k <= 0 || n == 0 {
		return nil
	}
	k1, b := p.K1, p.B
	avgLen := float64(x.totalLen) / float64(n)
	scores := make(map[string]float64)
	for _, t := range terms {
		if !(t.Weight > 0) {
			continue
		}
		udf, inField := 0, false
		for id, d := range x.docs {
			_, has := x.postings[t.Text][id]
			for f := range NumFields {
				if d.fields[f][t.Text] > 0 {
					has = true
					inField = inField || fp.Weight[f] > 0
				}
			}
			if has {
				udf++
			}
		}
		if udf == 0 {
			continue
		}
		w := lexical.IDF(n, udf) * t.Weight
		for id, d := range x.docs {
			tp, inText := x.postings[t.Text][id]
			var textNorm float64
			if inText { // a posting implies a length >= 1: avgLen > 0
				textNorm = 1 - b + b*float64(d.length)/avgLen
			}
			if !inField {
				if inText {
					tf := float64(tp.tf)
					scores[id] += w * tf * (k1 + 1) / (tf + k1*textNorm)
				}
				continue
			}
			var tf float64
			if inText {
				tf += 1 * float64(tp.tf) / textNorm
			}
			for f := range NumFields {
				if n := d.fields[f][t.Text]; n > 0 && fp.Weight[f] > 0 {
					avg := float64(x.fieldTotal[f]) / float64(len(x.docs))
					tf += fp.Weight[f] * float64(n) / (1 - fp.B[f] + fp.B[f]*float64(d.fieldLen[f])/avg)
				}
			}
			if tf > 0 {
				scores[id] += w * tf * (k1 + 1) / (k1 + tf)
			}
		}
	}
	return oracleHits(scores, k)
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
	return oracleHits(scores, k)
}

// oracleHits sorts the scored documents and keeps the k best. The original
// kept the k best in a heap; sorting everything gives the same k hits in
// the same order and is obviously right.
func oracleHits(scores map[string]float64, k int) []Hit {
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
