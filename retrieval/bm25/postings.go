package bm25

import "math"

// posting is one document's entry in a term's list. tf is exact (capped
// at MaxInt32 like the length): a narrower field would need an escape for
// the rare long repetitive text, and would save less than it costs.
type posting struct {
	doc uint32 // document number
	tf  uint32 // term frequency
}

// termList is one term's postings by ascending document number. Postings
// of deleted documents stay until compact or renumber drops them, so df
// counts only the live ones and len(p)-df the dead.
//
// A term of a field other than the text has its own list under a
// field-keyed term (fieldKey); the bare term's list counts in udf the
// live documents that have it in any field, text included (BM25F's
// document frequency). A bare list may so exist with no postings, for a
// term found only in fields; it is dropped once both counts reach 0.
type termList struct {
	term string // key in Index.terms, to drop it when df and udf reach 0
	p    []posting
	df   int
	udf  int // bare terms only: live documents with the term in any field
}

// slot is one document number's record. A live document keeps its term
// numbers so that Delete finds its postings without the text; a deleted
// one keeps nothing, and its number is not reused before renumber.
type slot struct {
	id string
	// terms are the distinct term numbers: the text's (terms[:text]),
	// then the field-keyed ones (the next fields), then the bare terms
	// found only in fields, whose udf this document counts; nil once
	// deleted. A document without fields has its text terms only.
	terms        []uint32
	text, fields uint32
}

// renumberMin is the number of dead document numbers below which
// renumber does not bother, however small the index.
const renumberMin = 256

// allocDoc returns a new document number, above every number in use, so
// that appending to a term's list keeps it sorted.
func (x *Index) allocDoc() uint32 {
	if len(x.slots) >= math.MaxUint32 {
		panic("bm25: more than 2^32-1 document numbers")
	}
	x.slots = append(x.slots, slot{})
	x.docLen = append(x.docLen, -1)
	x.fieldLen = append(x.fieldLen, fieldLens{})
	return uint32(len(x.slots) - 1)
}

// termNum returns t's term number, creating an empty list for a new term.
func (x *Index) termNum(t string) uint32 {
	if tid, ok := x.terms[t]; ok {
		return tid
	}
	var tid uint32
	if n := len(x.freeTerms); n > 0 {
		tid = x.freeTerms[n-1]
		x.freeTerms = x.freeTerms[:n-1]
	} else {
		if len(x.lists) >= math.MaxUint32 {
			panic("bm25: more than 2^32-1 terms")
		}
		x.lists = append(x.lists, termList{})
		tid = uint32(len(x.lists) - 1)
	}
	x.lists[tid] = termList{term: t}
	x.terms[t] = tid
	return tid
}

// deleteLocked tombstones id's document: its length becomes -1, which
// search reads as "skip", and each of its terms loses one df. Postings are
// not searched for (a common term's list holds a third of the corpus);
// compact and renumber remove them later, in bulk.
func (x *Index) deleteLocked(id string) bool {
	num, ok := x.ids[id]
	if !ok {
		return false
	}
	delete(x.ids, id)
	x.totalLen -= int(x.docLen[num])
	x.docLen[num] = -1
	for f, n := range x.fieldLen[num] {
		x.fieldTotal[f] -= int(n)
	}
	x.fieldLen[num] = fieldLens{}
	s := x.slots[num]
	x.slots[num] = slot{}
	text, fields := s.terms[:s.text], s.terms[s.text:s.text+s.fields]
	for _, tid := range text {
		x.lists[tid].df--
		x.lists[tid].udf--
	}
	for _, tid := range fields {
		x.lists[tid].df--
	}
	for _, tid := range s.terms[s.text+s.fields:] {
		x.lists[tid].udf--
	}
	for _, tid := range s.terms { // each number once: the three parts are disjoint
		l := &x.lists[tid]
		switch {
		case l.df == 0 && l.udf == 0: // every posting left is dead
			delete(x.terms, l.term)
			*l = termList{}
			x.freeTerms = append(x.freeTerms, tid)
		case len(l.p)-l.df > l.df:
			x.compact(l)
		}
	}
	if dead := len(x.slots) - len(x.ids); dead > max(len(x.ids), renumberMin) {
		x.renumber()
	}
	return true
}

// compact drops the dead postings of l. Called when they outnumber the
// live ones, it costs at most twice the deletions that made them:
// amortised O(1) per deleted posting, and a search never scans more than
// twice a term's live postings.
func (x *Index) compact(l *termList) {
	kept := l.p[:0]
	for _, p := range l.p {
		if x.docLen[p.doc] >= 0 {
			kept = append(kept, p)
		}
	}
	l.p = shrink(kept)
}

// shrink gives back the memory of a list that lost most of its postings
// (a burst of deletes), keeping room for some growth.
func shrink(p []posting) []posting {
	if cap(p) > 2*len(p)+16 {
		return append(make([]posting, 0, len(p)+len(p)/4), p...)
	}
	return p
}

// gone marks a deleted document in renumber's map of numbers.
const gone = math.MaxUint32

// renumber gives the live documents the numbers 0..N-1, in their order,
// and drops every dead posting. New documents always take the next
// number, so that lists stay sorted without inserting in the middle; this
// is what reclaims the numbers of deleted ones, once they outnumber the
// live. Its cost, O(postings), is amortised over those deletes, but it is
// one pause under the write lock: 0.6-1 s for 1M numbers of which 500k
// live, on a loaded 2-core machine (bandwidth-bound; processing the lists
// by blocks of numbers, as search does, measured no faster).
func (x *Index) renumber() {
	remap := make([]uint32, len(x.slots))
	live := uint32(0)
	for old, dl := range x.docLen {
		remap[old] = gone
		if dl >= 0 {
			remap[old] = live
			live++
		}
	}
	for tid := range x.lists {
		l := &x.lists[tid]
		// Half the postings may be dead, at random: a branch on each
		// would be mispredicted half the time, so every posting is
		// written and the write index advances by 0 or 1.
		w := 0
		for _, p := range l.p {
			num := remap[p.doc]
			l.p[w] = posting{doc: num, tf: p.tf}
			if num != gone {
				w++
			}
		}
		l.p = shrink(l.p[:w])
	}
	slots, docLen, fieldLen := x.slots[:0], x.docLen[:0], x.fieldLen[:0]
	for old, dl := range x.docLen {
		if dl >= 0 {
			slots = append(slots, x.slots[old])
			docLen = append(docLen, dl)
			fieldLen = append(fieldLen, x.fieldLen[old])
		}
	}
	clear(x.slots[len(slots):]) // drop references for the GC
	x.slots, x.docLen, x.fieldLen = slots, docLen, fieldLen
	if cap(x.slots) > 2*len(x.slots)+renumberMin {
		x.slots = append(make([]slot, 0, len(slots)+len(slots)/4), slots...)
		x.docLen = append(make([]int32, 0, len(docLen)+len(docLen)/4), docLen...)
		x.fieldLen = append(make([]fieldLens, 0, len(fieldLen)+len(fieldLen)/4), fieldLen...)
	}
	// A new map rather than updating the old: a Go map never shrinks,
	// and the old one was sized for live and dead documents together.
	x.ids = make(map[string]uint32, len(x.slots))
	for num, s := range x.slots {
		x.ids[s.id] = uint32(num)
	}
}
