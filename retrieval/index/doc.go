// Package index holds one namespace's in-memory indexes, derived from the
// store and never trusted over it: BM25 over each memory's text, speaker
// and time fields (retrieval/bm25), each source's time order (Order, for
// the context stage), the vector index (retrieval/hnsw), and what filters
// read (each memory's fields, the memories holding each source and
// metadata value, and every time, metadata number and metadata time
// string in sorted order), from which Allowed builds a filter's
// allow-list.
//
// Set.Put is the one way a memory's state enters a Set (text, fields,
// order and vector together, replacing its earlier state), and Remove the
// one way it leaves, whichever keeper applies the write: the embedded
// store's write path, its start-up build and repair, or the shared
// store's build and catch-up. A vector the vector index refuses after
// embed.Check accepted it is Put's error: the memory is then lexical-only
// in the Set while the store holds its vector, and the caller marks the
// namespace for a rebuild.
//
// A Set's writers are serialised by its keeper (the namespace's write
// lock); readers take no lock of the Set's own, since every index is safe
// for concurrent use.
package index
