// Package snap is the format of a namespace's vector index snapshot,
// which the owner keeps in files (one per namespace in
// Config.Owner.SnapshotDir) and the follower in the shared store, so that
// a start or a replica loads a vector index instead of inserting every
// vector again.
//
// A file is named by a hash of the namespace (namespaces may differ only
// in letter case, which some file systems fold, and may be longer than a
// file name may be). A snapshot is:
//
//	[0:8]      magic "RRKSNAP" + format version (1)
//	[8:12]     header length n, uint32 little endian, at most 64 KiB
//	[12:12+n]  header: JSON Header
//	[+4]       CRC-32C (Castagnoli) of the header, little endian
//	rest       the vector index as hnsw's Save writes it (own CRC-32C)
//
// The header is small and first, so that a stale snapshot (the common
// miss) is refused without reading the index. A snapshot that cannot be
// used is refused with a *MissError naming why (Kind), never a panic:
// the caller rebuilds the index from the store.
package snap
