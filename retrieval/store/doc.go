// Package store is the memory store contract that retrieval relies on,
// and nothing else: Backend (every store), Shared (a store several
// processes share: Feed, Snapshots, Purger, Pinger), the records they
// pass (Record, Item, Change, Cursor, VectorGen), the errors they wrap,
// and the rules both backends apply in the same way (ValidateKeys,
// ValidateVector, MarshalMemory, UnmarshalMemory).
//
// Two backends implement it: retrieval/store/bolt, one bbolt file held by
// one process (the embedded default), and retrieval/store/pgstore,
// PostgreSQL shared by any number of processes. This package links
// neither, so a program using one backend does not carry the other. The
// conformance suite in retrieval/store/storetest runs the Backend contract
// against both.
package store
