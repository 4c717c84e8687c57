// Package owner is the owner, the keeper of the indexes of a store of
// this process alone (a bbolt file): every write to the store passes
// through it, so its indexes are exact at every moment after the start-up
// build.
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
// # Snapshots
//
// Rebuilding an HNSW graph costs a beam search per vector, loading a saved
// one a sequential read, hundreds of times faster (docs/perf/measurements.md).
// With Config.Owner.SnapshotDir, each namespace's vector index is saved
// there (retrieval/snap: a header, then hnsw's Save format, each with a
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
// Embedder and Config.Owner.Backfill, after the start-up build the owner pages
// through every namespace and embeds them, Config.Owner.BackfillBatch texts per
// call, in the background. Each batch is stored with store.PutVectorsIf
// under the namespace's write lock: a vector is written only if the
// memory still has the text that was embedded and still has no usable
// vector, so a concurrent rewrite or delete always wins. Close cancels
// the embedder call in flight. Failed batches are logged and counted
// (Stats.BackfillFailed) and stay lexical-only; after a few failed calls
// in a row the back-fill gives up until the next start.
package owner
