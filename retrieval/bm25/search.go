package bm25

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/rerankd/rerankd/lexical"
)

// blockDocs is the span of document numbers scored together: the scores
// of one block (256 KiB) and its lengths (128 KiB) stay in a core's L2
// cache while every query term's postings in the block are added. A
// term-at-a-time pass over the whole index instead streams an 8 MB score
// array per term at 1M memories; it measured 1.5 times slower (blocks of
// 8k to 64k numbers measured the same), and pins 8 MB per concurrent
// search where a block pins 256 KiB.
const blockDocs = 1 << 15

// scratch is one search's working memory, pooled.
type scratch struct {
	acc     [blockDocs]float64 // by document number - block start; zero between blocks
	touched []uint32           // block-relative numbers with acc != 0, when tracked
	norms   []float64          // lengthNorm by document length, for short lengths
	cur     []cursor           // per query term found in the index, in query order
	heap    []cand

	// BM25F (SearchFields) only: one term's combined frequencies in the
	// block, zero between terms, allocated on first use; the block-relative
	// numbers it touched; a field-keyed term being looked up.
	tf        *[blockDocs]float64
	tfTouched []uint32
	key       []byte

	// allow, when set, is the search's allow-list by document number: a
	// document it lacks never enters the k best (SearchAllowed).
	allow []uint64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// cursor is one query term's postings not yet scored. With BM25F a term
// found in a field has one cursor per field (a group, in field order, the
// text first); their frequencies are combined before saturation.
type cursor struct {
	p []posting
	n int     // how many of p are in the current block
	w float64 // the term's IDF (times its weight)

	// BM25F only.
	fw    float64 // the field's weight (1 for the text)
	field int8    // 0: the text; f+1: field f
	group bool    // one of a term's several cursors
	last  bool    // the group's last cursor
	solo  bool    // the term's only cursor, in a field: saturated in one pass
}

// cand is a scored document number.
type cand struct {
	score float64
	doc   uint32
}

// maxNormTable bounds the per-query table of length norms: longer
// documents are rare and get theirs computed in place.
const maxNormTable = 4096

// Search returns the k best documents for query, by BM25 score descending
// then ID ascending. It returns no hits when k <= 0, the index is empty or
// the query has no terms in the index.
func (x *Index) Search(query string, k int) []Hit {
	qterms := x.an.QueryTerms(query)
	terms := make([]Term, len(qterms))
	for i, t := range qterms {
		terms[i] = Term{Text: t, Weight: 1}
	}
	return x.SearchTerms(terms, k, x.cfg)
}

// Term is one analysed query term and its weight: each document's BM25
// contribution of the term is multiplied by it (1 is plain BM25; query
// expansion and query analysis give other weights).
type Term struct {
	Text   string
	Weight float64
}

// SearchTerms is Search over already analysed, weighted terms with the
// BM25 parameters p (validated by the caller; the index's own are
// Config). Terms of weight <= 0 or not in the index are skipped; a term
// given twice counts twice, as a repeated query word does in Search.
func (x *Index) SearchTerms(terms []Term, k int, p Config) []Hit {
	if k <= 0 || len(terms) == 0 {
		return nil
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.search(s, terms, k, p)
}

func (x *Index) search(s *scratch, qterms []Term, k int, p Config) []Hit {
	n := len(x.ids)
	if n == 0 {
		return nil
	}
	s.cur = s.cur[:0]
	for _, t := range qterms {
		if !(t.Weight > 0) {
			continue
		}
		if tid, ok := x.terms[t.Text]; ok && x.lists[tid].df > 0 {
			l := &x.lists[tid]
			w := lexical.IDF(n, l.df)
			if t.Weight != 1 {
				w *= t.Weight
			}
			s.cur = append(s.cur, cursor{p: l.p, w: w})
		}
	}
	return x.scoreBlocks(s, k, p, nil)
}

// searchFields is search for SearchFields: each term's cursors, grouped
// when the term has postings in a field (see cursor).
func (x *Index) searchFields(s *scratch, qterms []Term, k int, p Config, fp *FieldParams) []Hit {
	if len(x.ids) == 0 {
		return nil
	}
	s.cur = s.cur[:0]
	for _, t := range qterms {
		if !(t.Weight > 0) {
			continue
		}
		start := len(s.cur)
		switch n := x.fieldCursors(s, t, fp); {
		case n > 1:
			for i := start; i < len(s.cur); i++ {
				s.cur[i].group = true
			}
			s.cur[len(s.cur)-1].last = true
			if s.tf == nil {
				s.tf = new([blockDocs]float64)
			}
		case n == 1 && s.cur[start].field != 0:
			s.cur[start].solo = true
		}
	}
	return x.scoreBlocks(s, k, p, fp)
}

// scoreBlocks scores the documents of s.cur's postings block by block and
// returns the k best.
func (x *Index) scoreBlocks(s *scratch, k int, p Config, fp *FieldParams) []Hit {
	if len(s.cur) == 0 {
		return nil
	}
	defer clear(s.cur) // a pooled scratch must not pin the postings
	avgLen := float64(x.totalLen) / float64(len(x.ids))
	s.fillNorms(min(int(x.maxLen)+1, maxNormTable), p.B, avgLen)

	// Most candidates score below the k-th best so far: floor rejects
	// them without a call, and is > 0 so that the untouched entries of a
	// block fail the same, well predicted, test. A score equal to it may
	// still win on its ID.
	h, floor := s.heap[:0], minScore
	for {
		// The next block is the one of the least unscored document.
		base, more := uint32(0), false
		for _, c := range s.cur {
			if len(c.p) > 0 && (!more || c.p[0].doc < base) {
				base, more = c.p[0].doc, true
			}
		}
		if !more {
			break
		}
		base &^= blockDocs - 1
		end := uint64(base) + blockDocs
		total := 0
		for i := range s.cur {
			c := &s.cur[i]
			c.n = sort.Search(len(c.p), func(j int) bool { return uint64(c.p[j].doc) >= end })
			total += c.n
		}
		// A block with few postings is cheaper to collect by remembering
		// which scores it touched than by scanning them all.
		track := total < blockDocs/8
		s.touched = s.touched[:0]
		// Query terms are summed in QueryTerms order, so a document's
		// score is the same float64 sum, bit for bit, as a map-based
		// accumulation over whole lists makes, whatever the history.
		for i := range s.cur {
			c := &s.cur[i]
			switch {
			case c.group:
				x.accumulateTF(s, c, c.p[:c.n], avgLen, p, fp)
				if c.last {
					s.saturate(c.w, p.K1, track)
				}
			case c.solo:
				x.accumulateField(s, c, c.p[:c.n], track, p, fp)
			default:
				x.accumulate(s, c.p[:c.n], c.w, avgLen, track, p)
			}
			c.p = c.p[c.n:]
		}
		if track {
			for _, d := range s.touched {
				if sc := s.acc[d]; sc >= floor && x.allowed(s, base+d) {
					h, floor = x.offer(h, k, cand{sc, base + d})
				}
				s.acc[d] = 0
			}
		} else {
			acc := s.acc[:min(blockDocs, len(x.docLen)-int(base))]
			for d, sc := range acc {
				if sc >= floor && x.allowed(s, base+uint32(d)) {
					h, floor = x.offer(h, k, cand{sc, base + uint32(d)})
				}
			}
			clear(acc)
		}
	}
	s.heap = h
	return x.hits(h)
}

// allowed reports whether the search's allow-list (if any) accepts doc.
func (x *Index) allowed(s *scratch, doc uint32) bool {
	return s.allow == nil || s.allow[doc/64]&(1<<(doc%64)) != 0
}

// minScore is the least score a hit can have: every term adds a positive
// amount. Only a NaN would fall below (lexical.CheckK1 bounds K1 so that
// the formula cannot overflow); such a document is no hit.
const minScore = math.SmallestNonzeroFloat64

// accumulate adds one term's contribution to the score of each live
// document in p, postings of one block. The expression is the textbook
// one, unfactored, so the rounding is the same as it always was.
func (x *Index) accumulate(s *scratch, p []posting, w, avgLen float64, track bool, cfg Config) {
	k1, b := cfg.K1, cfg.B
	docLen, norms := x.docLen, s.norms
	for _, e := range p {
		dl := docLen[e.doc]
		if dl < 0 { // deleted, not yet compacted away
			continue
		}
		var lenNorm float64
		if int(dl) < len(norms) {
			lenNorm = norms[dl]
		} else {
			lenNorm = lengthNorm(dl, b, avgLen)
		}
		tf := float64(e.tf)
		d := e.doc & (blockDocs - 1)
		a := &s.acc[d]
		if track && *a == 0 {
			s.touched = append(s.touched, d)
		}
		// tf >= 1 and lenNorm >= 0, so the denominator is >= 1 and the
		// term adds a positive amount: acc != 0 marks a touched document.
		*a += w * tf * (k1 + 1) / (tf + k1*lenNorm)
	}
}

// fillNorms tabulates lengthNorm for lengths below n.
func (s *scratch) fillNorms(n int, b, avgLen float64) {
	s.norms = slices.Grow(s.norms[:0], n)[:n]
	for i := range s.norms {
		s.norms[i] = lengthNorm(int32(i), b, avgLen)
	}
}

// lengthNorm is BM25's 1 - b + b·len/avgLen. A posting implies a term, so
// avgLen > 0 whenever it is needed; 1 is the guard for the impossible case.
func lengthNorm(dl int32, b, avgLen float64) float64 {
	if avgLen > 0 {
		return 1 - b + b*float64(dl)/avgLen
	}
	return 1
}

// better orders candidates by score descending, then ID ascending; the IDs
// are looked up only on a tie.
func (x *Index) better(a, b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return x.slots[a.doc].id < x.slots[b.doc].id
}

// offer keeps c in h, a heap of at most k candidates whose root is the
// worst, if it is among the k best so far. It returns the heap and the
// score below which a candidate cannot enter it: minScore until it is full.
func (x *Index) offer(h []cand, k int, c cand) ([]cand, float64) {
	if len(h) < k {
		h = append(h, c)
		for i := len(h) - 1; i > 0; { // sift up
			parent := (i - 1) / 2
			if !x.better(h[parent], h[i]) {
				break
			}
			h[parent], h[i] = h[i], h[parent]
			i = parent
		}
	} else if x.better(c, h[0]) {
		h[0] = c
		for i := 0; ; { // sift down
			worst, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && x.better(h[worst], h[l]) {
				worst = l
			}
			if r < len(h) && x.better(h[worst], h[r]) {
				worst = r
			}
			if worst == i {
				break
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	if len(h) < k {
		return h, minScore
	}
	return h, h[0].score
}

// hits sorts the kept candidates by score descending, then ID ascending,
// and fills in Norm.
func (x *Index) hits(h []cand) []Hit {
	if len(h) == 0 {
		return nil
	}
	hits := make([]Hit, len(h))
	for i, c := range h {
		hits[i] = Hit{ID: x.slots[c.doc].id, Score: c.score}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	maxScore := hits[0].Score
	if maxScore > 0 && !math.IsInf(maxScore, 0) {
		for i := range hits {
			hits[i].Norm = min(max(hits[i].Score/maxScore, 0), 1)
		}
	}
	return hits
}
