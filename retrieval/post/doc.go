// Package post holds the pure post-retrieval stages of rerankd: hybrid
// fusion of lexical and dense hits, a recency blend, and MMR
// diversification. Every function takes candidate lists and returns new
// ones; nothing here reads the wall clock, touches an index or mutates its
// input.
//
// # Why these stages
//
// Fusion. BM25 and vector search find different memories (exact names and
// numbers versus paraphrases), so the candidate set is their union. Their
// scores live on unrelated scales: BM25 is unbounded and query-dependent,
// cosine is in [-1, 1] and compressed near the top. WeightedSum therefore
// min-max normalises each list within the query before weighting (0.7
// vector, 0.3 BM25 by default); RRF ignores the scores and uses ranks only,
// which is robust when one list's scores are meaningless. A list whose
// scores are all equal normalises to 1 for every member: being retrieved at
// all is the only signal it carries.
//
// Recency. An agent's memories go stale: "I moved to Paris" beats "I live
// in Berlin" when both match. Recency does not multiply scores down; it blends
// score*(1-w) + 0.5^(age/halfLife)*w, so a small weight (0.1) breaks
// near-ties in favour of newer memories without burying an old memory that
// is clearly the answer.
//
// MMR. Agents repeat themselves; the top of a ranked list is often three
// phrasings of one fact, which wastes the context window. Maximal Marginal
// Relevance picks greedily the candidate maximising
// lambda*relevance - (1-lambda)*max similarity to those already picked.
//
// # Order
//
// As in the design: fusion produces candidates, the reranker rescores
// them, then recency, then MMR, each optional. Recency comes first because
// it changes relevance, and MMR must diversify the final relevance; MMR
// comes last because it defines the output order rather than a score.
//
// # Conventions
//
// Outputs are sorted by Score descending, ties by ID ascending — except
// MMR, whose order is its selection order (see MMR). Each output candidate
// has its own copy of Scores, with the stage's score recorded under
// "bm25", "vector", "fused", "recency" or "mmr"; Vector slices are shared
// with the input and never written. No output score is NaN or infinite:
// non-finite input scores (NaN, ±Inf) are treated as 0, and every division
// is guarded. Invalid configs are not errors at call time: each invalid
// field is replaced by its default, so call Validate when loading
// configuration.
package post
