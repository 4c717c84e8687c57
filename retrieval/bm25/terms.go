package bm25

import "github.com/rerankd/rerankd/lexical"

// DocTerms returns the distinct terms of document id's text (nil when it
// is not indexed), for query expansion from feedback documents.
func (x *Index) DocTerms(id string) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	num, ok := x.ids[id]
	if !ok {
		return nil
	}
	s := x.slots[num]
	tids := s.terms[:s.text]
	out := make([]string, len(tids))
	for i, tid := range tids {
		out[i] = x.lists[tid].term
	}
	return out
}

// IDF returns term's BM25 IDF in the index (Lucene's, as Search uses), and
// false when no live document has it.
func (x *Index) IDF(term string) (float64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	tid, ok := x.terms[term]
	if !ok || x.lists[tid].df == 0 {
		return 0, false
	}
	return lexical.IDF(len(x.ids), x.lists[tid].df), true
}
