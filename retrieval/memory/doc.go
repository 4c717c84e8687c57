// Package memory defines Memory, the unit of long-term agent memory that
// rerankd stores, indexes and ranks, and the rules every one obeys
// (Validate, ValidateNamespace, ValidateID) before any store sees it.
//
// Every other retrieval package (store, bm25, hnsw, post) exchanges this one
// type, so its invariants live here in Validate rather than being re-checked
// ad hoc by each consumer.
//
// # Namespaces and IDs are never path-like
//
// A namespace isolates one agent's (or one project's) memories from every
// other. Namespaces and IDs are used as storage keys, appear in logs and
// metrics labels, and may later be used to name files or URL path segments.
// To make them safe in all of those places they are restricted to ASCII
// letters, digits and '-', '_', '.', ':'. The separators '/' and '\\', NUL,
// the sequence "..", and a leading '.' are refused, so a namespace can never
// escape a directory, address a parent, or become a hidden file, and two
// distinct namespaces can never collide after path normalisation.
package memory
