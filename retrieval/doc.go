// Package retrieval is rerankd's first stage: from the memories of one
// namespace it proposes the candidates that the reranker scores, and it
// runs the whole memory-search pipeline (retrieve → rerank → threshold →
// recency → MMR → top k) for both the server and the eval harness.
//
// An Engine sits on a store.Store (the source of truth) and keeps, per
// namespace, two in-memory indexes derived from it: BM25 (retrieval/bm25)
// and a vector index (retrieval/hnsw). The indexes are never trusted over
// the store: they are rebuilt from it at start, and Check compares them with
// it and rebuilds a namespace that disagrees.
//
// # Degradation levels
//
// Search answers at the best level available and says which one answered:
//
//	hybrid  BM25 ∪ vector hits, fused (needs a query vector — from the
//	        Embedder or the client — and a non-empty vector index)
//	bm25    BM25 hits only (no embedder, no query vector, or no vectors yet)
//	scan    a direct, bounded scan of the store scored with per-request BM25
//	        (the namespace's index is still being built at start-up)
//
// So rerankd serves from the first second after start: while a large store
// is re-indexed in the background, searches scan; once BM25 is built they
// use it; once the vector index is built they are hybrid.
//
// # Writes and durability
//
// A write goes to the store first and is acknowledged only after the store
// has made it durable; the indexes are updated after, under the same
// per-namespace lock, so that for one memory the index order equals the
// store order. A crash between the two loses nothing: the next start
// rebuilds the index from the store. Writes made while the background build
// runs are recorded, and the build skips those IDs, so it never resurrects
// a deleted memory or overwrites a newer text with an older one.
//
// # Vectors
//
// Vectors come from the Embedder (documents embedded at add time, queries
// at search time) or from the client, with the dimension fixed by the
// Embedder or Config.Dim. A zero vector cannot be normalised for cosine, so
// it is refused for the vector index; its memory is stored and stays
// searchable lexically.
package retrieval
