// Package embed holds rerankd's one vector-validity rule (Check) and its
// normalisation (Normalize), which every vector passes before it reaches a
// vector index, whether an embedder made it or a client sent it; the
// options of one embedding call (Options, Result, Model); and Queue, the
// one bounded way to the embedding model that the memory search and the
// server's embedding routes share. It needs no model runtime: the
// embedders themselves (model.Embedder, over a decoder or an encoder
// folder) live in model/, the only package allowed cgo, and meet Model and
// retrieval's Embedder interface; without one, vectors come from the
// client (retrieval.Config.Dim) or there are none (BM25 only).
//
// Check(v, dim) is rerankd's one vector-validity rule: the HNSW and flat
// indexes (retrieval/hnsw) refuse exactly what it refuses, and retrieval
// tests every vector with it, at write time, at build, back-fill and
// snapshot replay, and for queries, so a memory answered "indexed" is in
// the index, and a zero vector is answered "zero_refused".
//
// Why the checks are strict: a vector of the wrong length cannot be
// compared with the index; NaN or Inf poison every distance computed with
// them; and a zero vector has no direction, so its cosine with anything is
// undefined. The first two are client errors (ErrDimension, ErrNonFinite).
// The third gets its own error, ErrZeroVector, because retrieval treats it
// differently: such a memory is still stored and lexically searchable, it
// just stays out of the vector index.
//
// Vectors handed to the index are L2-normalised (Normalize), so cosine
// similarity is a dot product; model.Embedder already returns unit
// vectors, client vectors are normalised here.
package embed
