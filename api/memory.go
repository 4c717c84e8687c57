package api

import "time"

// MemoryIn is one memory sent to POST /v1/memories.
type MemoryIn struct {
	// Namespace isolates tenants/agents/users; defaults to the request's
	// namespace. Letters, digits and . _ - : only (no separators).
	Namespace string `json:"namespace,omitempty"`
	// ID is unique within the namespace; generated when omitted. Adding an
	// existing ID replaces that memory.
	ID string `json:"id,omitempty"`
	// Text is required, valid UTF-8, at most 1 MiB.
	Text string `json:"text"`
	// Time is when the memory was formed (RFC 3339); the server's time of
	// arrival when omitted. Recency ranking uses it.
	Time *time.Time `json:"time,omitempty"`
	// Source is optional provenance (working directory, tool, file).
	Source string `json:"source,omitempty"`
	// Metadata is optional typed data: each value a string, a number or
	// a boolean (null drops the key), returned unchanged. Numbers are
	// float64, exact for integers up to 2^53. At most 64 keys; strings at
	// most 4 KiB.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Vector is an optional client-computed embedding of the server's
	// vector dimension; without it the server embeds Text if it has an
	// embedding model.
	Vector []float32 `json:"vector,omitempty"`
}

// AddMemoriesRequest is the body of POST /v1/memories: either one memory
// (the MemoryIn fields at the top level) or a batch in "memories".
type AddMemoriesRequest struct {
	MemoryIn
	// Memories, when present, is a batch written atomically: all or none.
	Memories []MemoryIn `json:"memories,omitempty"`
}

// AddedMemory reports one stored memory.
type AddedMemory struct {
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	// Vector is "indexed" (in the vector index), "none" (lexical only) or
	// "zero_refused" (a vector with no direction: all zeros or of L2 norm
	// at most 1e-30; stored without it).
	Vector string `json:"vector"`
}

// AddMemoriesResponse answers POST /v1/memories (201): every memory in it
// is durable.
type AddMemoriesResponse struct {
	Added []AddedMemory `json:"added"`
}

// Memory is a stored memory as returned by the API.
type Memory struct {
	Namespace string         `json:"namespace"`
	ID        string         `json:"id"`
	Text      string         `json:"text"`
	Time      time.Time      `json:"time"`
	Source    string         `json:"source,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	HasVector bool           `json:"has_vector"`
}

// ListMemoriesResponse answers GET /v1/memories/{namespace}.
type ListMemoriesResponse struct {
	Memories []Memory `json:"memories"`
	// Next is the cursor for the following page (?after=Next); absent at
	// the end.
	Next string `json:"next,omitempty"`
}

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	Namespace string `json:"namespace"`
	Query     string `json:"query"`
	// Vector is an optional client-computed query embedding.
	Vector []float32 `json:"vector,omitempty"`
	// Mode restricts retrieval: "bm25", "dense" or "hybrid" (an error when
	// vectors are unavailable); default: the best level available.
	Mode string `json:"mode,omitempty"`
	// TopK results to return (default 10, at most the server's max).
	TopK *int `json:"top_k,omitempty"`
	// Depth is how many candidates each retriever proposes (default 100).
	Depth *int `json:"depth,omitempty"`
	// Rerank scores candidates with the cross-encoder; default true when the
	// server has a model, false on the lexical default.
	Rerank *bool `json:"rerank,omitempty"`
	// RerankDepth caps how many retrieved candidates are reranked (default 50).
	RerankDepth *int `json:"rerank_depth,omitempty"`
	// Instruction replaces the reranker's default task instruction.
	Instruction string `json:"instruction,omitempty"`
	// Threshold drops results whose score (rerank probability, else the
	// fused retrieval score) is below it; omitted: no threshold.
	Threshold *float64 `json:"threshold,omitempty"`
	// Fusion overrides how BM25 and vector hits are combined.
	Fusion *FusionParams `json:"fusion,omitempty"`
	// Recency blends in exponential decay by age; off when absent.
	Recency *RecencyParams `json:"recency,omitempty"`
	// MMR diversifies the results; off when absent.
	MMR *MMRParams `json:"mmr,omitempty"`
	// Ranking selects the lexical first stage's ranking; absent: the
	// default (cross-validated on LoCoMo: BM25 k1 1.2 b 0.1, speaker and
	// time fields at weight 4, plus context).
	Ranking *RankingParams `json:"ranking,omitempty"`
	// Prefer favours the memories a filter matches without excluding the
	// others: a score term (see PreferParams).
	Prefer *PreferParams `json:"prefer,omitempty"`
	// Filters restricts the search to the memories they match, applied
	// before every stage's cut-off: top_k matching memories come back
	// whenever that many match.
	Filters *Filter `json:"filters,omitempty"`
}

// RankingParams selects the lexical ranking: Name picks a whole one
// ("default" or "bm25", plain BM25 k1 1.2 b 0.75 with no other stage),
// and the other fields override its parts.
type RankingParams struct {
	Name       string   `json:"name,omitempty"`
	K1         *float64 `json:"k1,omitempty"`
	B          *float64 `json:"b,omitempty"`
	QueryWords *bool    `json:"query_words,omitempty"`
	NameWeight *float64 `json:"name_weight,omitempty"`
	// Expansion is pseudo-relevance feedback (off in both named rankings).
	Expansion *ExpansionParams `json:"expansion,omitempty"`
	// Context is neighbour and source evidence (on in "default").
	Context *ContextParams `json:"context,omitempty"`
	// Fields is field-aware matching (BM25F): the memory's speaker and
	// time are matched beside its text (on in "default": speaker 4, time
	// 4; off in "bm25").
	Fields *FieldsParams `json:"fields,omitempty"`
}

// ExpansionParams configures RM3-style query expansion from the first
// pass's top memories.
type ExpansionParams struct {
	Docs   *int     `json:"docs,omitempty"`   // feedback memories, 1..50; default 5
	Terms  *int     `json:"terms,omitempty"`  // added terms, 0 (off)..50; default 20
	Weight *float64 `json:"weight,omitempty"` // best added term's weight, (0, 1]; default 0.4
}

// ContextParams configures neighbour and source context.
type ContextParams struct {
	Window    *int     `json:"window,omitempty"`    // neighbours each side, 1..20
	Neighbour *float64 `json:"neighbour,omitempty"` // [0, 2]
	Source    *float64 `json:"source,omitempty"`    // [0, 2]; both 0: off
}

// FieldsParams configures field-aware matching: a query term's frequency
// in the memory's speaker (its metadata "speaker") and time (year, month,
// day; matched by the dates the query names) counts these weights times
// an occurrence in its text. An empty object on a ranking without fields
// ("bm25") turns on speaker 2, time 4.
type FieldsParams struct {
	Speaker  *float64 `json:"speaker,omitempty"`   // [0, 10]; 0: off; default 4 (an empty object on "bm25": 2)
	Time     *float64 `json:"time,omitempty"`      // [0, 10]; 0: off; default 4
	SpeakerB *float64 `json:"speaker_b,omitempty"` // length normalisation in the field, [0, 1]; default 0
	TimeB    *float64 `json:"time_b,omitempty"`    // [0, 1]; default 0
}

// FusionParams selects hybrid fusion.
type FusionParams struct {
	// Method is "weighted_sum" (default) or "rrf".
	Method       string   `json:"method,omitempty"`
	VectorWeight *float64 `json:"vector_weight,omitempty"` // default 0.7
	BM25Weight   *float64 `json:"bm25_weight,omitempty"`   // default 0.3
	RRFK         *float64 `json:"rrf_k,omitempty"`         // default 60
}

// RecencyParams configures the recency blend score*(1-w) + 0.5^(age/half_life)*w.
type RecencyParams struct {
	Weight *float64 `json:"weight,omitempty"` // default 0.1
	// HalfLife is a Go duration ("168h", "30m"); default 7 days.
	HalfLife string `json:"half_life,omitempty"`
	// Now is the reference time (RFC 3339); the server's clock when omitted.
	Now *time.Time `json:"now,omitempty"`
}

// MMRParams configures maximal marginal relevance.
type MMRParams struct {
	Lambda *float64 `json:"lambda,omitempty"` // default 0.7
	Window *int     `json:"window,omitempty"` // default 20
}

// SearchResponse answers POST /v1/search.
type SearchResponse struct {
	ID string `json:"id"`
	// Level is the retrieval level that answered: "hybrid", "bm25", "scan",
	// or "dense" for mode "dense".
	Level string `json:"level"`
	// Vectors says what the search did with vectors: "used", "not
	// configured" (no embedding model and no vector dimension), "not
	// requested" (mode bm25), "none stored" (no memory of the namespace
	// has one), "no query vector" (send one, or run an embedding model),
	// "building" (the vector index is being built).
	Vectors string `json:"vectors"`
	// Degraded is set only when something not ready made the answer worse
	// than the configuration allows (an index still building), saying
	// what.
	Degraded string         `json:"degraded,omitempty"`
	Reranked bool           `json:"reranked"`
	Backend  string         `json:"backend,omitempty"` // the reranker, when used
	Results  []SearchResult `json:"results"`
	Counts   SearchCounts   `json:"counts"`
	TimingMs SearchTiming   `json:"timing_ms"`
}

// SearchResult is one memory with its score and the score of each stage
// it went through ("bm25", "vector", "fused", "rerank", "recency", "mmr").
type SearchResult struct {
	Memory
	Score  float64            `json:"score"`
	Scores map[string]float64 `json:"scores"`
}

// SearchCounts says how many candidates each stage kept.
type SearchCounts struct {
	Retrieved      int `json:"retrieved"`
	Reranked       int `json:"reranked"`
	AboveThreshold int `json:"above_threshold"`
	Returned       int `json:"returned"`
}

// SearchTiming is each stage's time in milliseconds.
type SearchTiming struct {
	Retrieve float64 `json:"retrieve"`
	Rerank   float64 `json:"rerank"`
	Post     float64 `json:"post"`
}

// DeleteResponse answers DELETE /v1/memories/{namespace}/{id}.
type DeleteResponse struct {
	Deleted bool `json:"deleted"`
}

// PreferParams is a score term: after the threshold, a memory Filters
// matches gets score×(1−weight)+weight, any other score×(1−weight)
// (scores.prefer is 1 or 0), so the agent's current project (e.g. source
// equal to its working directory) ranks first at equal relevance.
type PreferParams struct {
	Filters *Filter  `json:"filters"`
	Weight  *float64 `json:"weight,omitempty"` // (0, 1]; default 0.1
}

// Filter selects memories, in Qdrant's shape: every condition of Must,
// at least one of Should (when it has any), none of MustNot. Keys "time",
// "source" and "id" are the memory's fields; "metadata.K" or any other
// key is metadata key K.
type Filter struct {
	Must    []Condition `json:"must,omitempty"`
	Should  []Condition `json:"should,omitempty"`
	MustNot []Condition `json:"must_not,omitempty"`
}

// Condition is one test: Key with Match or Range, or IsEmpty, or a nested
// filter (Must, Should, MustNot at the condition's level).
type Condition struct {
	Key     string            `json:"key,omitempty"`
	Match   *MatchCondition   `json:"match,omitempty"`
	Range   *RangeCondition   `json:"range,omitempty"`
	IsEmpty *IsEmptyCondition `json:"is_empty,omitempty"`
	Must    []Condition       `json:"must,omitempty"`
	Should  []Condition       `json:"should,omitempty"`
	MustNot []Condition       `json:"must_not,omitempty"`
}

// MatchCondition is equality: exactly one of Value (equal), Any (equal to
// one: "in") or Except (equal to none, or absent: "not in"). Values are
// strings, numbers or booleans; "5" never equals 5.
type MatchCondition struct {
	Value  any   `json:"value,omitempty"`
	Any    []any `json:"any,omitempty"`
	Except []any `json:"except,omitempty"`
}

// RangeCondition bounds a number, or a time given as an RFC 3339 string
// (the "time" key, or metadata strings holding times).
type RangeCondition struct {
	GT  any `json:"gt,omitempty"`
	GTE any `json:"gte,omitempty"`
	LT  any `json:"lt,omitempty"`
	LTE any `json:"lte,omitempty"`
}

// IsEmptyCondition matches memories without Key (absent or null); under
// must_not it is "exists".
type IsEmptyCondition struct {
	Key string `json:"key"`
}

// UpdateMemoryRequest is the body of PATCH /v1/memories/{namespace}/{id}:
// each field given replaces the memory's; metadata is merged key by key
// (null removes a key). A changed text is embedded again unless a vector
// is given.
type UpdateMemoryRequest struct {
	Text     *string        `json:"text,omitempty"`
	Time     *time.Time     `json:"time,omitempty"`
	Source   *string        `json:"source,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Vector   []float32      `json:"vector,omitempty"`
}

// UpdateMemoryResponse answers PATCH /v1/memories/{namespace}/{id}: the
// memory as stored now, durable.
type UpdateMemoryResponse struct {
	Memory
	// Vector: as AddedMemory's.
	Vector string `json:"vector"`
}

// ForgetResponse answers DELETE /v1/memories/{namespace}: every memory of
// the namespace is deleted, durably, with its vectors and index state.
type ForgetResponse struct {
	Namespace string `json:"namespace"`
	Deleted   int    `json:"deleted"`
}

// NamespaceInfo is one namespace the caller may see.
type NamespaceInfo struct {
	Namespace string `json:"namespace"`
	Memories  int    `json:"memories"`
}

// NamespacesResponse answers GET /v1/namespaces: the namespaces holding
// memories that the caller's key may read, sorted.
type NamespacesResponse struct {
	Namespaces []NamespaceInfo `json:"namespaces"`
}
