// Package hnsw is approximate nearest-neighbour search over memory
// embeddings, by cosine similarity.
//
// Why: embedding retrieval over a growing collection (100k+ memories of
// 1024 dimensions) should not scan every vector per query; an HNSW graph
// answers in time roughly logarithmic in the collection when the data has
// structure. Small namespaces, and tests, use Flat, the exact scan, which
// is also the recall and latency baseline.
//
// # Implementations
//
// Both implement Index:
//
//   - HNSW: our implementation of Malkov & Yashunin's hierarchical
//     navigable small world graph (the comparison with
//     github.com/coder/hnsw, which lost on recall at every setting, is in
//     docs/perf/measurements.md).
//   - Flat: exact. Scores every row in float32 SIMD and rescores only the
//     possible top k in float64, so its results equal a float64 scan's
//     (see scanTopK); ~16x faster than a scalar float64 scan at 1024-d.
//
// Vectors are L2-normalised on Add and Search, so the score is the dot
// product, i.e. the cosine similarity in [-1, 1], recomputed exactly in
// float64 for every returned hit (scores equal Flat's). Zero vectors
// (ErrZeroVector: no direction, hence no cosine), vectors with NaN or Inf
// (ErrNonFinite) and vectors of the wrong dimension (ErrDimMismatch) are
// refused, as vectors and as queries, by every implementation: exactly
// the vectors retrieval/embed.Check refuses (a norm at most
// embed.MinNorm is zero), so a vector the memory service accepts as indexed is
// never refused here.
//
// # The native algorithm
//
//   - Each node gets a random level l = floor(-ln(U)·mL), mL = 1/ln(M).
//   - Insert and Search descend the layers above the target greedily
//     (ef = 1), then run an ef-bounded beam search on each lower layer (a
//     min-heap of candidates and a max-heap of the best ef; stop when the
//     closest candidate is farther than the farthest result):
//     ef = EfConstruction when inserting, max(EfSearch, k) when searching.
//   - Neighbours are chosen with the diversity heuristic (Algorithm 4): a
//     candidate is kept only if it is closer to the new node than to every
//     neighbour kept so far; rejected candidates fill up to M if fewer
//     pass (hnswlib's keepPrunedConnections). At most M links per node on
//     the upper layers, 2M on layer 0. Links are bidirectional; a
//     neighbour whose list overflows is pruned with the same heuristic.
//   - Distance is 1 - dot of unit vectors, float32 SIMD
//     (github.com/viterin/vek). Vectors live in one flat []float32.
//   - Low-contrast fallback (Config.ScanContrast, default 0.8): when the
//     best hit is barely closer than the mean of 32 sampled nodes, the
//     data has no structure near the query and the answer is recomputed by
//     an exact scan (see lowContrast).
//
// Defaults: M 16, EfConstruction 200, EfSearch 200, ScanContrast 0.8:
// recall is what matters here (the reranker after retrieval costs far
// more than the search), and a larger M only helps unstructured data,
// which the fallback answers exactly anyway. The measurements behind
// them are in docs/perf/measurements.md.
//
// # Deletes
//
// Deletes are tombstones in HNSW: Delete, and Add of an
// existing id (replace), mark the old node dead; it stays in the graph to
// route searches through but is never returned. Search widens ef
// (doubling) when tombstones leave fewer than k live results, and the
// graph is rebuilt from the live vectors, in insertion order, once dead
// nodes outnumber live ones (and are at least 64), so the cost is
// amortised O(1) re-insertions per operation. Level generation is seeded
// (Config.Seed), so the same sequence of operations builds the same graph.
//
// # Persistence
//
// HNSW Saves to an io.Writer and Loads back (format in
// persist.go: config, ids, tombstones, links, vectors, CRC-32C; damage is
// reported as ErrCorrupt). Rebuilding from the store's vectors is always
// possible but slow for the graph (EfConstruction beam searches per
// insert), while Load is a sequential read; so persist the index and rebuild only when the saved
// file is missing or corrupt. Save holds the read lock: searches go on.
//
// # Concurrency
//
// HNSW and Flat are safe for concurrent use: searches (and Save)
// share a read lock; Add, Delete and SetSearch take the write lock.
package hnsw
