// Package bolt is rerankd's embedded, single-file, ACID memory store, built
// on bbolt (a B+tree with copy-on-write pages and a single writer). It
// implements store.Backend; the contract, its errors and the JSON of a
// memory record are retrieval/store's.
//
// # Durability
//
// A write (Put, PutBatch, PutVectorsIf, Delete) is acknowledged — the method returns nil —
// only after its bbolt transaction has committed and the file has been
// fsync'ed. A process crash (even SIGKILL) or power loss after that point
// cannot lose it; a crash before it leaves the previous consistent state.
// Options.NoSync disables the fsync for throwaway data (tests, benchmarks,
// rebuildable caches) and is never the default. PutBatch writes all items in
// one transaction: all of them become visible and durable, or none do.
//
// # Namespace isolation
//
// Layout inside the file:
//
//	meta        "schema" → uint32 LE store format version (StoreSchema)
//	memories    <namespace> → { <id> → memory record }
//	embeddings  <namespace> → { <id> → vector record }
//	vecgen      <namespace> → vector generation: uint64 LE sequence,
//	            uint64 LE random stamp (see VectorGen)
//
// Every namespace has its own sub-bucket in both top-level buckets, so a
// lookup, iteration or count in one namespace cannot see another namespace's
// keys; there is no shared key space to get a prefix wrong in.
//
// # Vector generations
//
// Every transaction that changes a namespace's vectors also gives it a new
// VectorGen (a sequence number and a random stamp), so that a vector index
// saved outside the store (retrieval's snapshots) can tell at start whether
// it still holds exactly the store's vectors. The vecgen bucket is ignored
// by builds that predate it, so the format version did not change; a store
// written by such a build after a snapshot was taken would not have moved
// its generations (delete the snapshots after downgrading and upgrading). Namespaces and
// IDs are validated with memory.ValidateNamespace / memory.ValidateID before
// they are used as keys. Deleting a namespace's last memory removes its
// sub-buckets.
//
// # Record formats
//
// Memory record (versioned JSON with a checksum):
//
//	[0]    'M' magic
//	[1]    format version (1)
//	[2:4]  reserved, zero
//	[4:8]  CRC-32C (Castagnoli) of the JSON payload, little-endian
//	[8:]   JSON encoding of memory.Memory
//
// Vector record (binary, never JSON — embeddings are the bulk of the file and
// must load fast at start-up):
//
//	[0]    'V' magic
//	[1]    format version (1)
//	[2:4]  reserved, zero
//	[4:8]  dimension, uint32 little-endian
//	[8:12] CRC-32C of the payload, little-endian
//	[12:]  dimension × float32, IEEE-754 little-endian
//
// bbolt does not checksum data pages, so each record carries its own CRC:
// decoding a damaged record returns an error wrapping ErrCorrupt that names
// the namespace and ID, and never panics. Check walks the whole file and
// reports every such record.
package bolt
