package keep

// Stats describes one namespace's indexes.
type Stats struct {
	Namespace string
	// Indexed is the number of memories in the BM25 index.
	Indexed int
	// Vectors is the number of memories in the vector index.
	Vectors int
	// Ready says both indexes are built.
	Ready bool
	// VectorSource says where the vector index came from at start:
	// "snapshot" (loaded from Config.Owner.SnapshotDir), "rebuild" (built from
	// the store), or "" (not built yet, a namespace created since start,
	// or no vector index).
	VectorSource string
	// SnapshotMiss says why a rebuilt namespace's snapshot was not used
	// ("missing: …", "stale: …", "corrupt: …", "dimension: …", "config:
	// …"), when snapshots are on.
	SnapshotMiss string
	// Backfilled counts memories the back-fill gave a vector since start;
	// BackfillFailed those whose embedding failed (they stay lexical-only
	// until a later start tries again).
	Backfilled     int
	BackfillFailed int
}

// FollowStats counts what a follower did since it started.
type FollowStats struct {
	// Loaded is how many namespaces were resident at the time of the
	// call, and Bytes their estimated index memory.
	Loaded int
	Bytes  int64
	// Builds counts namespace builds from the store, Evictions the
	// namespaces dropped for Config.Follow.IndexMemory, Changes the changes
	// applied from the change sequence, SnapshotLoads the builds whose
	// vector index came from the store's snapshot, SnapshotSaves the
	// snapshots this process saved there.
	Builds, Evictions, Changes, SnapshotLoads, SnapshotSaves int64
}

// Disagreement is one namespace whose indexes did not match the store.
type Disagreement struct {
	Namespace string
	// StoreMemories / IndexedMemories: memories in the store and in BM25.
	StoreMemories   int
	IndexedMemories int
	// StoreVectors counts usable stored vectors; IndexedVectors the vector
	// index's size.
	StoreVectors   int
	IndexedVectors int
	// Missing / Extra: IDs in the store but not in BM25, and the reverse
	// (first few only).
	Missing []string
	Extra   []string
	// MissingVectors: IDs with a usable stored vector that the vector
	// index lacks (first few only). With equal counts, none missing also
	// means none extra.
	MissingVectors []string
	// Dirty: an index update had failed after a durable write.
	Dirty bool
	// Repaired: the namespace's indexes were rebuilt from the store.
	Repaired bool
}

// CheckReport is the result of Check.
type CheckReport struct {
	Namespaces int
	Memories   int
	// OtherDim counts stored vectors of another dimension than the memory service's
	// (written under a different embedding model); they are not indexed.
	OtherDim      int
	Disagreements []Disagreement
}
