package lexical

import (
	"fmt"
	"math"
	"slices"
)

// maxQueryTerms caps the number of distinct query terms, like Lucene's
// clause limit: a megabyte-long "query" cannot make scoring quadratic.
// Terms past the cap are ignored.
const maxQueryTerms = 1024

// query is an analyzed query: distinct terms in first-occurrence order.
type query struct {
	terms []string
	index map[string]int
}

// analyzeQuery analyzes the query and keeps its distinct non-stopword
// terms. A repeated query term counts once. If every term is a stopword
// ("the who", "to be or not to be"), the stopwords are kept instead, so
// such queries still rank documents by overlap.
func (a *Analyzer) analyzeQuery(text string) query {
	var content, stops []string
	a.scratch().analyze(text, func(term []byte, stop bool) {
		if stop {
			if len(content) == 0 {
				stops = append(stops, string(term))
			}
			return
		}
		content = append(content, string(term))
	})
	terms := content
	if len(terms) == 0 {
		terms = stops
	}
	q := query{index: make(map[string]int, len(terms))}
	for _, t := range terms {
		if len(q.terms) == maxQueryTerms {
			break
		}
		if _, dup := q.index[t]; !dup {
			q.index[t] = len(q.terms)
			q.terms = append(q.terms, t)
		}
	}
	return q
}

// posting is the frequency of query term `term` in one document.
type posting struct {
	term int32
	tf   int32
}

// collection holds what BM25 needs from the request's documents.
type collection struct {
	n        int       // number of documents
	df       []int     // documents containing each query term
	postings []posting // all documents' postings, concatenated
	start    []int     // document i's postings are postings[start[i]:start[i+1]]
	totalLen int       // sum of document lengths (tokens)
}

// collect analyzes every document once, recording its length in
// results[i].Tokens and the frequencies of the query's terms only, so
// memory is proportional to matches, not to document size.
func (s *Scorer) collect(q query, docs []string, results []Result) collection {
	nq := len(q.terms)
	c := collection{
		n:     len(docs),
		df:    make([]int, nq),
		start: make([]int, len(docs)+1),
	}
	row := make([]int32, nq) // scratch: tf of each query term in this doc
	var touched []int        // query terms seen in this doc
	var tokens int
	bufs := s.an.scratch()
	countTerm := func(term []byte, _ bool) {
		tokens++
		if nq == 0 {
			return
		}
		if j, ok := q.index[string(term)]; ok {
			if row[j] == 0 {
				touched = append(touched, j)
			}
			if row[j] < math.MaxInt32 {
				row[j]++
			}
		}
	}
	for i, d := range docs {
		tokens = 0
		touched = touched[:0]
		bufs.analyze(d, countTerm)
		results[i].Tokens = tokens
		c.totalLen += tokens
		// Sorted so the per-document sum below runs in query-term order:
		// equal documents give bit-identical scores whatever their word order.
		slices.Sort(touched)
		for _, j := range touched {
			c.postings = append(c.postings, posting{term: int32(j), tf: row[j]})
			c.df[j]++
			row[j] = 0
		}
		c.start[i+1] = len(c.postings)
	}
	return c
}

// IDF is rerankd's BM25 IDF, Lucene's log(1 + (N - n + 0.5)/(n + 0.5))
// for a term in n of N documents: the request scorer here and the memory
// index (retrieval/bm25) both use it. Unlike the Robertson-Sparck Jones
// form log((N - n + 0.5)/(n + 0.5)) it stays positive and finite for
// every 0 <= n <= N, including N = n = 1 (a single-document request) and
// terms present in every document.
func IDF(nDocs, df int) float64 {
	return math.Log1p((float64(nDocs-df) + 0.5) / (float64(df) + 0.5))
}

// MaxK1 bounds BM25's k1, so that tf·(k1+1) stays finite for any
// document and the scores keep their resolution.
const MaxK1 = 1000

// CheckK1 is rerankd's one rule for BM25's k1, used by the request scorer
// (Config), the memory index (retrieval/bm25.Config) and a memory
// search's per-query ranking: a number in [0, MaxK1].
func CheckK1(k1 float64) error {
	if !(k1 >= 0 && k1 <= MaxK1) {
		return fmt.Errorf("k1 %v: want a number in [0, %v]", k1, MaxK1)
	}
	return nil
}

// CheckB is the one rule for BM25's b (see CheckK1): a number in [0, 1].
func CheckB(b float64) error {
	if !(b >= 0 && b <= 1) {
		return fmt.Errorf("b %v: want a number in [0, 1]", b)
	}
	return nil
}

// bm25 returns each document's raw BM25 score and the query's maximum
// attainable score, sum over query terms of IDF·(K1+1) (the limit of the
// term-frequency factor as tf grows).
func (s *Scorer) bm25(c collection, results []Result) (raws []float64, maxRaw float64) {
	k1, b := s.cfg.K1, s.cfg.B
	idfs := make([]float64, len(c.df))
	for j, df := range c.df {
		idfs[j] = IDF(c.n, df)
		maxRaw += idfs[j] * (k1 + 1)
	}
	avgLen := 0.0
	if c.n > 0 {
		avgLen = float64(c.totalLen) / float64(c.n)
	}
	raws = make([]float64, c.n)
	for i := range raws {
		ps := c.postings[c.start[i]:c.start[i+1]]
		if len(ps) == 0 {
			continue
		}
		// A document with a posting has at least one token, so avgLen > 0;
		// the guard only documents that.
		lenNorm := 1.0
		if avgLen > 0 {
			lenNorm = 1 - b + b*float64(results[i].Tokens)/avgLen
		}
		raw := 0.0
		for _, p := range ps {
			tf := float64(p.tf)
			// tf >= 1, so the denominator is >= 1 whatever K1 and B are.
			raw += idfs[p.term] * tf * (k1 + 1) / (tf + k1*lenNorm)
		}
		raws[i] = raw
	}
	return raws, maxRaw
}
