// Package retrieval is rerankd's first stage: from the memories of one
// namespace it proposes the candidates that the reranker scores, and it
// runs the whole memory-search pipeline (retrieve → rerank → threshold →
// recency → MMR → top k) for both the server and the eval harness.
//
// An Engine sits on a store.Backend (the source of truth) and keeps, per
// namespace, in-memory indexes derived from it (retrieval/index: BM25 with
// fields, each source's time order, the vector index). The Engine is a
// facade over one keeper of those indexes, picked by New from the store:
//
//   - the owner, for a store of this process alone (a bbolt file): the
//     indexes are rebuilt from the store at start (the vector index loaded
//     from a snapshot file instead when one exactly matches the store, see
//     Snapshots), every write updates them under the namespace's lock, and
//     Check compares them with the store, memory by memory, and rebuilds a
//     namespace that disagrees;
//   - the follower, for a store shared with other processes (store.Shared,
//     PostgreSQL): the indexes are caches, built on a namespace's first
//     use, following the store's change sequence, caught up before every
//     search, dropped past a memory budget (see follow.go).
//
// The indexes are never trusted over the store. The facade validates,
// embeds, writes and searches the same way for both keepers, and reaches
// the indexes only through the keeper seam (keeper.go). The sections below
// on writes, snapshots and back-fill describe the owner; the follower's
// are in follow.go.
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
//
// # Snapshots
//
// Rebuilding an HNSW graph costs a beam search per vector, loading a saved
// one a sequential read, hundreds of times faster (docs/measurements.md).
// With Config.Owner.SnapshotDir, each namespace's vector index is saved
// there (snapfile.go: a header, then hnsw's Save format, each with a
// CRC-32C; written to a temporary file, fsync'ed, renamed, directory
// fsync'ed) after the start-up build, at Close, and when writes have gone
// quiet for Config.Owner.SnapshotIdle.
//
// A snapshot must never add or lose a vector, so it records the store's
// vector generation (store.VectorGen) of its namespace, which every write
// of that namespace's vectors replaces in the same bbolt transaction, with
// a random stamp so that equal generations mean equal vectors even after a
// namespace is re-created or an older store file restored. At start the
// generations are read at New, before any write; the vector phase loads a
// snapshot only if its generation, dimension and graph parameters match,
// then re-applies from the store the writes made since New (the touched
// IDs). Anything else — missing, stale (a write after the snapshot, e.g. a
// crash skipped the save at Close), damaged, another dimension or index
// configuration — is logged, reported in Stats.SnapshotMiss, and the index
// is rebuilt: a snapshot can make a start faster, never fail it. BM25 is
// always rebuilt from the store (it is fast). A snapshot is saved only from
// a complete index without failed updates, and its generation is read
// under the namespace's write lock, so the index holds at least that
// generation's vectors; writes that reach it while it is written move the
// store past that generation, so such a file is refused as stale.
//
// # Back-fill
//
// Memories stored before an Embedder was configured (or with a zero
// vector, or one of another dimension) have no usable vector. With an
// Embedder and Config.Owner.Backfill, after the start-up build the engine pages
// through every namespace and embeds them, Config.Owner.BackfillBatch texts per
// call, in the background. Each batch is stored with store.PutVectorsIf
// under the namespace's write lock: a vector is written only if the
// memory still has the text that was embedded and still has no usable
// vector, so a concurrent rewrite or delete always wins. Close cancels
// the embedder call in flight. Failed batches are logged and counted
// (Stats.BackfillFailed) and stay lexical-only; after a few failed calls
// in a row the back-fill gives up until the next start.
//
// # Lexical ranking
//
// The BM25 list is ranked per query by a lexrank.Ranking (lexrank's
// DefaultRanking unless the query has its own): query analysis, BM25,
// BM25F over speaker and time fields, feedback and context (see
// retrieval/lexrank). The scan level uses the ranking's k1 and b only.
//
// Tracing: Retrieve and Search start child spans of the span in their
// context (retrieve, query_analysis, bm25, expansion, context, embed_query,
// vector_search, scan, fill, rerank, threshold, recency, mmr) with counts
// only, never query or memory text.
package retrieval
