// Package bm25 is an incremental, in-memory BM25 inverted index over a
// growing collection of memories.
//
// Why: lexical.Scorer scores the documents of one request, with IDF and
// average length taken from that request alone. Retrieval needs the
// opposite: a long-lived collection that grows and shrinks one memory at a
// time, searched by query without re-analysing every document. Index keeps
// per-term postings, document lengths and the total length, and updates
// them on every Add and Delete, so a search costs time proportional to the
// postings of the query's terms.
//
// Analysis is Config.Analyzer's Terms (documents) and QueryTerms
// (queries), lexical's default analyzer when it is nil, so a document
// matches here exactly when a lexical.Scorer of the same CJK mode would
// match it: the same NFKC-normalised Unicode words, Snowball English
// (Porter2) stems, CJK terms of the mode (unigrams and bigrams by
// default; bigrams only, or gse dictionary words, in the other
// lexical.CJKMode values), and the same rule that a query of only
// stopwords keeps them.
//
// Scoring is Okapi BM25 with Lucene's IDF, log(1 + (N - df + 0.5)/(df +
// 0.5)) (lexical.IDF, shared with the request scorer), which is finite
// and positive for every 0 <= df <= N; K1 and B follow lexical.CheckK1
// and CheckB. Each Hit has
// the raw BM25 score and Norm, the score divided by the best score of the
// same query, in [0, 1]; raw scores are not comparable across queries,
// Norm is what a hybrid ranker should fuse.
//
// # Layout
//
// The index is sized for a million memories, where maps keyed by document
// ID (term → ID → posting), the first layout, cost 3.5 KB per memory and
// seconds per query: each posting was a map entry, and each score a
// string-keyed map write.
// Instead documents get dense numbers (uint32) and every table is a slice
// indexed by them: a term's postings are 8-byte {number, tf} pairs, the
// lengths an []int32, the IDs and per-document term lists a slot table.
// Terms get numbers too, so a document's term list, kept so that Delete
// finds its postings without the text, is 4 bytes a term.
//
// New documents always take the next number, never a freed one, so
// appending keeps every postings list sorted by number, which search's
// blocks depend on. Delete only tombstones (length -1) and lowers df: finding a
// document in a common term's list would cost as much as the list. Dead
// postings are dropped per term once they outnumber the live ones, and all
// of them, with the numbers renumbered densely, once dead numbers
// outnumber live documents; both are amortised over the deletes that made
// the garbage, and keep a search from scanning more than twice the live
// postings. Renumbering is one pause under the write lock, about a second
// at 1M numbers, once per deletion of as many memories as remain.
//
// Search scores term at a time into a float64 accumulator, but one block
// of 32k document numbers at a time: every query term's postings in the
// block, in QueryTerms order, then the block's scores go through a k-sized
// heap. Blocking keeps the accumulator and lengths in cache (a whole-index
// accumulator is 8 MB at 1M memories and ran 1.5 times slower), and
// summing in query order keeps each score the same float64 sum, bit for
// bit, as the map-based index made: ties between equal scores, broken by
// ID, stay where they were. The accumulator is pooled: beyond analysing
// the query, a search allocates only its hits. Dynamic pruning (MaxScore, block-max WAND) was not
// needed: a top-100 search of 1M synthetic memories takes about a
// millisecond, and pruning would have to re-sum survivors in query order
// to stay exact.
//
// # Fields (BM25F)
//
// AddFields gives a document terms in up to NumFields fields beside its
// text (retrieval puts a speaker and time terms there), and SearchFields
// scores them as BM25F: a term's frequency is combined over the fields,
// each weighted and length-normalised on its own, before saturation. A
// field's terms have their own lists, keyed by a control byte and the
// term, so deletes, compaction and renumbering treat them as any list;
// the bare term's list counts, in udf, the documents that have it in any
// field (BM25F's document frequency), and may exist without postings.
// Search and SearchTerms never read them: a plain search of an index
// with fields is the same, bit for bit, as of one without. The cost is
// where fields match: a term with postings in the text and a weighted
// field, or in several, is summed into a per-term block of frequencies,
// then saturated (two passes over its postings instead of one); a term
// found in one field only (a time term) is saturated in one pass, and
// one found only in the text takes the plain path.
//
// An Index is safe for concurrent use: searches share a read lock, Add and
// Delete take the write lock only after analysing their text.
package bm25
