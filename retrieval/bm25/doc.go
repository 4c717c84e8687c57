// Package bm25 is an incremental, in-memory BM25 inverted index over a
// growing collection of memories.
//
// Why: lexical.Scorer scores the documents of one request, with IDF and
// average length taken from that request alone. Retrieval needs the
// opposite: a long-lived collection that grows and shrinks one memory at a
// time, searched by query without re-analysing every document. Index keeps
// per-term postings (term → document → term frequency), document lengths
// and the total length, and updates them on every Add and Delete, so a
// search costs time proportional to the postings of the query's terms.
//
// Analysis is lexical.Terms (documents) and lexical.QueryTerms (queries),
// so a document matches here exactly when lexical.Scorer would match it:
// the same Unicode words, Porter step-1 stems and CJK bigrams, and the
// same rule that a query of only stopwords keeps them.
//
// Scoring is Okapi BM25 with Lucene's IDF, log(1 + (N - df + 0.5)/(df +
// 0.5)), which is finite and positive for every 0 <= df <= N. Each Hit has
// the raw BM25 score and Norm, the score divided by the best score of the
// same query, in [0, 1]; raw scores are not comparable across queries,
// Norm is what a hybrid ranker should fuse.
//
// An Index is safe for concurrent use: searches share a read lock, Add and
// Delete take the write lock only after analysing their text.
package bm25
