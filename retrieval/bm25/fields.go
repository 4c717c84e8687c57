package bm25

import (
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/lexical"
)

// NumFields is how many fields a document may have beside its text.
const NumFields = 2

// Fields are a document's terms outside its text, by field (the caller
// decides what each field holds; retrieval puts the speaker in field 0
// and time terms in field 1). The terms are taken as given, not analysed:
// a caller that wants a field's terms to match query terms analyses them
// with the index's Analyzer. A field's length is its number of terms
// (capped at 65535).
type Fields [NumFields][]string

// fieldLens are one document's field lengths.
type fieldLens [NumFields]uint16

// fieldKey appends the key of term t's list in field f to dst: a control
// byte that no analysed term contains, then t.
func fieldKey(dst []byte, f int, t string) []byte {
	return append(append(dst, byte(1+f)), t...)
}

// FieldParams are BM25F's per-field parameters for SearchFields: field
// f's term frequency counts Weight[f] times a text occurrence, after
// length normalisation by B[f] within the field. The text itself has
// weight 1 and the search's B.
type FieldParams struct {
	Weight [NumFields]float64 // in [0, MaxFieldWeight]; 0: the field is not searched
	B      [NumFields]float64 // in [0, 1]
}

// MaxFieldWeight bounds a field's weight.
const MaxFieldWeight = 10

// On reports whether any field is searched.
func (fp FieldParams) On() bool {
	for _, w := range fp.Weight {
		if w != 0 {
			return true
		}
	}
	return false
}

// Validate reports every invalid value, joined.
func (fp FieldParams) Validate() error {
	var errs []error
	for f := range NumFields {
		if w := fp.Weight[f]; !(w >= 0 && w <= MaxFieldWeight) {
			errs = append(errs, fmt.Errorf("bm25: field %d weight %v: want a number in [0, %d]", f, w, MaxFieldWeight))
		}
		if b := fp.B[f]; !(b >= 0 && b <= 1) {
			errs = append(errs, fmt.Errorf("bm25: field %d b %v: want a number in [0, 1]", f, b))
		}
	}
	return errors.Join(errs...)
}

// SearchFields is SearchTerms scored as BM25F (Robertson, Zaragoza and
// Taylor, "Simple BM25 extension to multiple weighted fields", CIKM 2004,
// with per-field length normalisation as in Zaragoza et al., "Microsoft
// Cambridge at TREC-13", 2004): a query term's frequency in a document is
// combined over the fields before saturation,
//
//	tf~ = tf_text/B_text + Σ_f w_f·tf_f/B_f,  B_f = 1 - b_f + b_f·len_f/avglen_f
//	score = Σ_terms weight · idf · tf~·(k1 + 1)/(k1 + tf~)
//
// with the text's B_text the usual 1 - b + b·len/avglen, every average
// over all live documents (a document without the field has length 0
// there), and idf from the number of documents that have the term in any
// field. Without field weights (fp.On false) it is SearchTerms, bit for
// bit; a term found only in the text scores as there, except that its
// idf counts the documents that have it in a field only.
func (x *Index) SearchFields(terms []Term, k int, p Config, fp FieldParams) []Hit {
	return x.SearchAllowed(terms, k, p, fp, nil)
}

// SearchAllowed is SearchFields over the documents whose IDs allowed
// lists (nil: all): the k best of those, so a filter never empties the top
// k while k allowed documents have a query term. Other documents are
// scored but never enter the top k; the list becomes a bitset by document
// number, so the test per scored document is one bit.
func (x *Index) SearchAllowed(terms []Term, k int, p Config, fp FieldParams, allowed []string) []Hit {
	if k <= 0 || len(terms) == 0 {
		return nil
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if allowed != nil {
		bits := make([]uint64, (len(x.slots)+63)/64)
		for _, id := range allowed {
			if d, ok := x.ids[id]; ok {
				bits[d/64] |= 1 << (d % 64)
			}
		}
		s.allow = bits
		defer func() { s.allow = nil }()
	}
	if !fp.On() {
		return x.search(s, terms, k, p)
	}
	return x.searchFields(s, terms, k, p, &fp)
}

// fieldCursors appends t's cursors for BM25F: the text's postings, then
// each weighted field's, all with the term's weight times its BM25F idf.
// It reports how many it appended.
func (x *Index) fieldCursors(s *scratch, t Term, fp *FieldParams) int {
	tid, ok := x.terms[t.Text]
	if !ok || x.lists[tid].udf == 0 {
		return 0
	}
	l := &x.lists[tid]
	w := lexical.IDF(len(x.ids), l.udf) * t.Weight
	start := len(s.cur)
	if l.df > 0 {
		s.cur = append(s.cur, cursor{p: l.p, w: w, fw: 1})
	}
	for f, fw := range fp.Weight {
		if !(fw > 0) {
			continue
		}
		s.key = fieldKey(s.key[:0], f, t.Text)
		if ftid, ok := x.terms[string(s.key)]; ok {
			s.cur = append(s.cur, cursor{p: x.lists[ftid].p, w: w, fw: fw, field: int8(f + 1)})
		}
	}
	return len(s.cur) - start
}

// accumulateTF adds one cursor's block of postings to the combined term
// frequencies of its term (s.tf), remembering the documents it touches.
func (x *Index) accumulateTF(s *scratch, c *cursor, p []posting, avgLen float64, cfg Config, fp *FieldParams) {
	docLen, norms := x.docLen, s.norms
	f := int(c.field) - 1
	var b, avg float64
	if f >= 0 {
		b, avg = fp.B[f], float64(x.fieldTotal[f])/float64(len(x.ids))
	}
	for _, e := range p {
		dl := docLen[e.doc]
		if dl < 0 { // deleted, not yet compacted away
			continue
		}
		var norm float64
		switch {
		case f >= 0:
			// A posting implies a length >= 1, so avg > 0.
			norm = 1 - b + b*float64(x.fieldLen[e.doc][f])/avg
		case int(dl) < len(norms):
			norm = norms[dl]
		default:
			norm = lengthNorm(dl, cfg.B, avgLen)
		}
		d := e.doc & (blockDocs - 1)
		t := &s.tf[d]
		if *t == 0 {
			s.tfTouched = append(s.tfTouched, d)
		}
		// tf >= 1, norm > 0 (b = 1 with length 0 has no posting) and the
		// weight > 0: a touched document's sum is > 0.
		*t += c.fw * float64(e.tf) / norm
	}
}

// accumulateField adds the BM25F contribution of a term found in one
// field only (a time term, a speaker who is not in the text) in one pass:
// the combined frequency is that field's alone, fw·tf/B_f, saturated at
// once (the same operations, in the same order, as accumulateTF and
// saturate would do).
func (x *Index) accumulateField(s *scratch, c *cursor, p []posting, track bool, cfg Config, fp *FieldParams) {
	f := int(c.field) - 1
	b, avg := fp.B[f], float64(x.fieldTotal[f])/float64(len(x.ids))
	k1, w := cfg.K1, c.w
	for _, e := range p {
		if x.docLen[e.doc] < 0 { // deleted, not yet compacted away
			continue
		}
		t := c.fw * float64(e.tf) / (1 - b + b*float64(x.fieldLen[e.doc][f])/avg)
		d := e.doc & (blockDocs - 1)
		a := &s.acc[d]
		if track && *a == 0 {
			s.touched = append(s.touched, d)
		}
		*a += w * t * (k1 + 1) / (k1 + t)
	}
}

// saturate turns the combined frequencies of one term (s.tf) into its
// BM25F contribution, weight·tf~·(k1+1)/(k1+tf~), added to the scores,
// and clears them.
func (s *scratch) saturate(w, k1 float64, track bool) {
	for _, d := range s.tfTouched {
		t := s.tf[d]
		s.tf[d] = 0
		a := &s.acc[d]
		if track && *a == 0 {
			s.touched = append(s.touched, d)
		}
		*a += w * t * (k1 + 1) / (k1 + t)
	}
	s.tfTouched = s.tfTouched[:0]
}
