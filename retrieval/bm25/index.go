package bm25

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/rerankd/rerankd/lexical"
)

// Hit is one search result.
type Hit struct {
	ID string
	// Score is the raw BM25 score, > 0 for every hit.
	Score float64
	// Norm is Score divided by the best Score of this query's hits, in
	// [0, 1]; 0 when that maximum is not a positive finite number. Never NaN.
	Norm float64
}

// doc is what Delete needs to undo an Add.
type doc struct {
	length int      // number of terms, stopwords included
	terms  []string // distinct terms
}

// posting is one term's entry for one document. The document length is
// copied in so scoring a posting needs no second map lookup.
type posting struct {
	tf     int32 // term frequency
	docLen int32 // document length in terms
}

// Index is an incremental BM25 index. The zero value is not usable; call
// New. Safe for concurrent use.
type Index struct {
	cfg Config

	mu       sync.RWMutex
	postings map[string]map[string]posting // term → document ID → posting
	docs     map[string]doc
	totalLen int // sum of document lengths, for the average length
}

// New returns an empty index, or an error if cfg is invalid.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bm25.New: %w", err)
	}
	return &Index{
		cfg:      cfg,
		postings: make(map[string]map[string]posting),
		docs:     make(map[string]doc),
	}, nil
}

// Config returns the index's parameters.
func (x *Index) Config() Config { return x.cfg }

// Len returns the number of documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.docs)
}

// Add indexes text under id, replacing any document with the same id. A
// text without terms is still a document (of length 0): it counts in N.
func (x *Index) Add(id, text string) {
	terms := lexical.Terms(text) // analyse outside the lock
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		if tf[t] < math.MaxInt32 {
			tf[t]++
		}
	}
	d := doc{length: min(len(terms), math.MaxInt32), terms: make([]string, 0, len(tf))}
	for t := range tf {
		d.terms = append(d.terms, t)
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(id)
	for t, n := range tf {
		p := x.postings[t]
		if p == nil {
			p = make(map[string]posting)
			x.postings[t] = p
		}
		p[id] = posting{tf: n, docLen: int32(d.length)}
	}
	x.docs[id] = d
	x.totalLen += d.length
}

// Delete removes the document id and reports whether it was present.
func (x *Index) Delete(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.deleteLocked(id)
}

func (x *Index) deleteLocked(id string) bool {
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

// Search returns the k best documents for query, by BM25 score descending
// then ID ascending. It returns no hits when k <= 0, the index is empty or
// the query has no terms in the index.
func (x *Index) Search(query string, k int) []Hit {
	if k <= 0 {
		return nil
	}
	qterms := lexical.QueryTerms(query)
	if len(qterms) == 0 {
		return nil
	}

	x.mu.RLock()
	n := len(x.docs)
	if n == 0 {
		x.mu.RUnlock()
		return nil
	}
	k1, b := x.cfg.K1, x.cfg.B
	avgLen := float64(x.totalLen) / float64(n)
	scores := make(map[string]float64)
	// Query terms are summed in QueryTerms order, so a document's score
	// does not depend on map iteration order or on the index's history.
	for _, t := range qterms {
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		w := idf(n, len(p))
		for id, f := range p {
			tf := float64(f.tf)
			lenNorm := 1.0
			if avgLen > 0 { // a posting implies a term, so avgLen > 0
				lenNorm = 1 - b + b*float64(f.docLen)/avgLen
			}
			// tf >= 1 and lenNorm >= 0, so the denominator is >= 1.
			scores[id] += w * tf * (k1 + 1) / (tf + k1*lenNorm)
		}
	}
	x.mu.RUnlock()

	return topK(scores, k)
}

// idf is Lucene's BM25 IDF, log(1 + (N - df + 0.5)/(df + 0.5)): finite and
// > 0 for 0 <= df <= N.
func idf(n, df int) float64 {
	return math.Log1p((float64(n-df) + 0.5) / (float64(df) + 0.5))
}

// topK sorts the scored documents by score descending, then ID ascending,
// keeps the first k and fills in Norm.
func topK(scores map[string]float64, k int) []Hit {
	h := make(worstFirst, 0, min(k, len(scores)))
	for id, s := range scores {
		hit := Hit{ID: id, Score: s}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if better(hit, h[0]) {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	hits := []Hit(h)
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
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

// better orders hits by score descending, then ID ascending.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// worstFirst is a heap whose root is the worst hit kept so far.
type worstFirst []Hit

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return better(h[j], h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Has reports whether id is indexed.
func (x *Index) Has(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.docs[id]
	return ok
}

// IDs returns the indexed IDs in no particular order.
func (x *Index) IDs() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.docs))
	for id := range x.docs {
		out = append(out, id)
	}
	return out
}
