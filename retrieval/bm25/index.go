package bm25

import (
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

// Index is an incremental BM25 index. The zero value is not usable; call
// New. Safe for concurrent use.
type Index struct {
	cfg Config
	an  *lexical.Analyzer // cfg.Analyzer, or lexical's default

	mu sync.RWMutex

	// Documents, by document number (see doc.go).
	ids      map[string]uint32 // live document ID → number
	slots    []slot            // by number
	docLen   []int32           // by number: length, or -1 once deleted
	totalLen int               // sum of live lengths, for the average length
	maxLen   int32             // longest length ever added

	// Fields other than the text (see Fields), by document number and
	// field: lengths (0 when deleted), and the sums of live lengths.
	fieldLen   []fieldLens
	fieldTotal [NumFields]int

	// Terms, by term number.
	terms     map[string]uint32 // term → number, for terms of live documents
	lists     []termList        // by number
	freeTerms []uint32
}

// New returns an empty index, or an error if cfg is invalid.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bm25.New: %w", err)
	}
	return &Index{
		cfg:   cfg,
		an:    cfg.Analysis(),
		ids:   make(map[string]uint32),
		terms: make(map[string]uint32),
	}, nil
}

// Config returns the index's parameters.
func (x *Index) Config() Config { return x.cfg }

// Analyzer returns the analysis of documents and queries (Config.Analyzer,
// or lexical's default): callers that analyse a query themselves before
// SearchTerms must use it, or their terms will not match the index's.
func (x *Index) Analyzer() *lexical.Analyzer { return x.an }

// Len returns the number of documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Has reports whether id is indexed.
func (x *Index) Has(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.ids[id]
	return ok
}

// IDs returns the indexed IDs in no particular order.
func (x *Index) IDs() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.ids))
	for id := range x.ids {
		out = append(out, id)
	}
	return out
}

// Add indexes text under id, replacing any document with the same id. A
// text without terms is still a document (of length 0): it counts in N.
func (x *Index) Add(id, text string) { x.AddFields(id, text, Fields{}) }

// AddFields is Add with terms in fields beside the text (see Fields),
// which SearchFields weighs as BM25F; Search and SearchTerms see the text
// alone, as if the fields were absent.
func (x *Index) AddFields(id, text string, fields Fields) {
	// Analyse and count outside the lock; sorting and counting runs needs
	// no map per document, and gives the terms in a fixed order.
	terms := x.an.Terms(text)
	length := int32(min(len(terms), math.MaxInt32))
	distinct, tfs := countTerms(terms)
	var fd [NumFields]struct {
		terms []string
		tfs   []uint32
	}
	var lens fieldLens
	nField, extra := 0, []string(nil)
	for f, ft := range fields {
		if len(ft) == 0 {
			continue
		}
		lens[f] = uint16(min(len(ft), math.MaxUint16))
		fd[f].terms, fd[f].tfs = countTerms(slices.Clone(ft))
		nField += len(fd[f].terms)
		for _, t := range fd[f].terms {
			if _, inText := slices.BinarySearch(distinct, t); !inText {
				extra = append(extra, t)
			}
		}
	}
	slices.Sort(extra)
	extra = slices.Compact(extra)
	var tids []uint32
	if n := len(distinct) + nField + len(extra); n > 0 {
		tids = make([]uint32, 0, n)
	}
	var key []byte

	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(id)
	num := x.allocDoc()
	for i, t := range distinct {
		tid := x.termNum(t)
		l := &x.lists[tid]
		l.p = append(l.p, posting{doc: num, tf: tfs[i]})
		l.df++
		l.udf++
		tids = append(tids, tid)
	}
	for f := range fd {
		for i, t := range fd[f].terms {
			key = fieldKey(key[:0], f, t)
			tid := x.termNum(string(key))
			l := &x.lists[tid]
			l.p = append(l.p, posting{doc: num, tf: fd[f].tfs[i]})
			l.df++
			tids = append(tids, tid)
		}
		x.fieldTotal[f] += int(lens[f])
	}
	for _, t := range extra {
		tid := x.termNum(t)
		x.lists[tid].udf++
		tids = append(tids, tid)
	}
	x.slots[num] = slot{id: id, terms: tids, text: uint32(len(distinct)), fields: uint32(nField)}
	x.docLen[num] = length
	x.fieldLen[num] = lens
	x.maxLen = max(x.maxLen, length)
	x.ids[id] = num
	x.totalLen += int(length)
}

// countTerms sorts terms in place and returns the distinct ones (sharing
// terms' array) with their frequencies, capped at MaxInt32.
func countTerms(terms []string) ([]string, []uint32) {
	slices.Sort(terms)
	distinct := terms[:0]
	var tfs []uint32
	for i, t := range terms {
		if i > 0 && t == terms[i-1] {
			if n := &tfs[len(tfs)-1]; *n < math.MaxInt32 {
				*n++
			}
			continue
		}
		distinct = append(distinct, t)
		tfs = append(tfs, 1)
	}
	return distinct, tfs
}

// Delete removes the document id and reports whether it was present.
func (x *Index) Delete(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.deleteLocked(id)
}

// Bytes estimates the index's memory: postings (8 bytes each, at most one
// per term occurrence), per-document slots and the ID and term maps. It is
// for cache budgets, not accounting: it errs high rather than low.
func (x *Index) Bytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	const perDoc, perTerm = 96, 64 // map entry, slot, length, term-number slice headers
	postings := x.totalLen
	for _, n := range x.fieldTotal {
		postings += n
	}
	b := int64(postings)*(8+4) + int64(len(x.slots))*perDoc + int64(len(x.terms))*perTerm
	for id := range x.ids {
		b += int64(len(id))
	}
	return b
}
