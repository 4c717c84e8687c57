// Package lexrank is retrieval's lexical stage: how a query's BM25 list is
// ranked over a namespace's index.Set. A Ranking names the steps: query
// analysis (query words, names), BM25 with the ranking's k1 and b (they
// apply at search time, so one index serves every ranking), BM25F over
// each memory's speaker and time fields when the ranking has Fields,
// optional pseudo-relevance feedback (a second pass with the added
// terms), then optional context over each source's time order. Stage's
// score is what fusion sees; its BM25 is the first pass's.
//
// Stage reads the Set without locks of its own and writes nothing; it
// starts child spans of the span in its context (query_analysis, bm25,
// expansion, context) with counts only, never query or memory text.
package lexrank
