// Package retrieval is rerankd's memory service: it stores an agent's
// memories (through a store.Backend, the source of truth), keeps per
// namespace the indexes derived from them, proposes the candidates of a
// query at the best degradation level available, and runs the whole
// memory-search pipeline (retrieve → rerank → threshold → recency → MMR →
// top k) for the server, MCP and the eval harness. A write is acknowledged
// only once durable; a search sees every write acknowledged before it.
//
// A Service sits on a store (the source of truth) and keeps, per
// namespace, in-memory indexes derived from it (retrieval/index: BM25 with
// fields, each source's time order, the vector index). The Service is a
// facade over one keeper of those indexes, picked by New from the store
// (the only place that tells the two apart):
//
//   - the owner (retrieval/owner), for a store of this process alone (a
//     bbolt file): the indexes are rebuilt from the store at Start (the
//     vector index loaded from a snapshot file instead when one exactly
//     matches the store), every write goes through it and updates them
//     under the namespace's lock, memories without a vector are
//     back-filled, and Check compares them with the store, memory by
//     memory, and rebuilds a namespace that disagrees;
//   - the follower (retrieval/follow), for a store shared with other
//     processes (store.Shared, PostgreSQL): the indexes are caches, built
//     on a namespace's first use, following the store's change sequence,
//     caught up before every search, dropped past a memory budget; writes
//     go to the store only, and reach the indexes through the change
//     sequence like any other process's.
//
// The indexes are never trusted over the store. The facade validates,
// embeds, writes and searches the same way for both keepers, and reaches
// the indexes only through the seam of retrieval/keep (Keeper: open a
// namespace's indexes, write, delete, check, start, close, stats; Slot:
// one namespace's indexes and how to complete candidates from them). A
// write is acknowledged only once the store has made it durable, with
// either keeper; a search reflects every write acknowledged before it
// began, or fails with ErrUnavailable. Config holds the common fields and
// one section per keeper (Owner, Follow), each validated by its package.
//
// # The API's requests, validated once
//
// The fronts (serve's HTTP routes, MCP) decode and authorize; the service
// maps the API's requests (package api) onto its calls and checks them,
// here and nowhere else: SearchRequestOf (every search parameter, its
// default and its bounds; Search and Retrieve run the same checks for
// in-process callers), ItemsOf, PatchOf, ListPage and CompileFilter.
// Every problem of a request is reported at once, each naming its request
// field ("recency.half_life", "mmr.lambda"). Errors carry their kind as a
// value (Classify: ErrorKind, the field, a client message), which a front
// maps to its status in one table; their text needs no editing.
//
// Reranking is handed down, never called back up: Config.Rerank holds the
// Scorer the composition root built once (the model behind its scheduler
// queue, calibrated when the server is, the one /rerank scores with),
// whether a search reranks by default, and the calibrated default
// threshold.
//
// # Degradation levels
//
// Search answers at the best level available and says which one answered:
//
//	hybrid  BM25 ∪ vector hits, fused (needs a query vector — from the
//	        Embedder or the client — and a non-empty vector index)
//	bm25    BM25 hits only (no embedder, no query vector, or no vectors yet)
//	scan    a direct, bounded scan of the store scored with per-request BM25
//	        (the namespace's index is still being built: at start-up, or
//	        a shared namespace's first build outlasting its catch-up bound)
//
// and a fourth, asked for rather than fallen back to:
//
//	dense   vector hits only (Query.Mode ModeDense; an error when no vector
//	        search can run, never a silent fall back to BM25)
//
// ModeHybrid likewise fails when vectors are unavailable, and ModeBM25
// never uses them; the default (ModeAuto) degrades as above.
//
// So rerankd serves from the first second after start: while a large store
// is re-indexed in the background, searches scan; once BM25 is built they
// use it; once the vector index is built they are hybrid.
//
// # Filters, update and forget
//
// A Query's Filter (retrieval/filter, Qdrant's shape) is applied before
// every stage cuts its candidates: the namespace's indexes keep what
// filters read of each memory, a search builds the allow-list once
// (from the memories a top-level equality or range selects, when the
// filter has one: retrieval/index), BM25
// keeps the depth best allowed memories, the vector index scans the
// allowed vectors exactly when they are few and walks its graph with the
// allow-list otherwise, and context adds no refused neighbour; so a
// search returns the k best matching memories whenever k match. Prefer is
// a score term, not a filter. Update rewrites one memory through Add;
// Forget deletes a namespace in one store transaction and empties its
// indexes (every replica's, through the change sequence). List with a
// filter reads the matching IDs from the same allow-list once the
// namespace's indexes are built (the store page by page before, and when
// an eighth or more of its memories match).
//
// # Vectors
//
// Vectors come from the Embedder (documents embedded at add time, queries
// at search time) or from the client, with the dimension fixed by the
// Embedder or Config.Dim. A zero vector cannot be normalised for cosine, so
// it is refused for the vector index; its memory is stored and stays
// searchable lexically.
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
