package store

import (
	"errors"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// Backend is the memory store contract. Two backends meet it:
// retrieval/store/bolt (one bbolt file held by one process, the embedded
// default) and retrieval/store/pgstore (PostgreSQL, shared by any number
// of processes).
// The conformance suite in retrieval/store/storetest runs every behaviour
// below against both.
//
// Every method returns only after its effect is durable (committed), or
// an error and no effect; a write whose outcome cannot be known (the
// connection to a server dropped during commit) is an error wrapping
// ErrUnavailable and is never acknowledged. Errors wrap ErrNotFound,
// ErrInvalid, ErrCorrupt, ErrClosed or ErrUnavailable where those apply.
//
// Callbacks (List, ForEach, PutVectorsIf's keep) must not call the
// backend: the bbolt backend runs them inside its transaction. An error a callback
// returns stops the iteration and is returned unchanged. List and ForEach
// promise no snapshot across pages (PostgreSQL reads page by page);
// callers that need one read a sequence first and catch up after, as the
// follower (retrieval/follow) does. Vectors passed in or returned are never
// aliased, and a memory's time keeps its UTC offset.
type Backend interface {
	// Put stores m, replacing any memory with the same namespace and ID,
	// with its embedding vec; a nil vec removes a previous embedding.
	Put(m memory.Memory, vec []float32) error
	// PutBatch stores all items atomically (all or none); a later
	// duplicate (namespace, ID) wins.
	PutBatch(items []Item) error
	// Delete removes ns/id and its embedding (ErrNotFound if absent).
	// Deleting a namespace's last memory removes the namespace and its
	// vector generation.
	Delete(ns, id string) error
	// DeleteNamespace removes every memory of ns with its embeddings, its
	// vector generation and any vector index snapshot the store keeps,
	// atomically, and returns how many memories it held (0 and no error
	// when ns does not exist).
	DeleteNamespace(ns string) (int, error)
	// PutVectorsIf stores vectors for existing memories of ns, each only
	// if keep accepts the stored record (a compare-and-set for the
	// back-fill); it returns the IDs written, sorted.
	PutVectorsIf(ns string, vecs map[string][]float32, keep func(Record) bool) ([]string, error)

	// Get returns ns/id (ErrNotFound if absent).
	Get(ns, id string) (memory.Memory, error)
	// Vector returns ns/id's embedding (ErrNotFound if it has none).
	Vector(ns, id string) ([]float32, error)
	// GetMany returns the records of ids that exist, in the order of ids.
	GetMany(ns string, ids []string, withVectors bool) ([]Record, error)
	// Page returns up to limit records of ns with IDs after `after` in
	// byte order, and the cursor of the next page ("" at the end).
	Page(ns, after string, limit int, withVectors bool) ([]Record, string, error)
	// List calls fn for every memory of ns in ID byte order.
	List(ns string, fn func(memory.Memory) error) error
	// Namespaces returns the namespaces holding at least one memory, sorted.
	Namespaces() ([]string, error)
	// Count returns the number of memories in ns (0 if it does not exist).
	Count(ns string) (int, error)
	// ForEach calls fn for every record of every namespace (namespaces
	// sorted, IDs in byte order) with its vector.
	ForEach(fn func(Record) error, opts ...ForEachOption) error

	// VectorGen returns ns's vector generation (zero if none recorded).
	VectorGen(ns string) (VectorGen, error)
	// VectorGens returns every namespace's vector generation.
	VectorGens() (map[string]VectorGen, error)
	// BumpVectorGen gives ns a new generation without changing its
	// vectors (ErrNotFound when ns has no memories).
	BumpVectorGen(ns string) (VectorGen, error)

	// CheckProgress validates every record, reporting each problem to fn
	// and progress (done, total) to progress; either may be nil.
	CheckProgress(fn func(Problem), progress func(done, total int64)) (CheckStats, error)
	// Close releases the backend; further calls fail with ErrClosed.
	Close() error
}

// ErrStale marks a change-sequence cursor older than the history a shared
// store still keeps (deletes are purged after a while): the follower may
// have missed a delete and must rebuild the namespace.
var ErrStale = errors.New("change cursor older than the kept history")

// ErrUnavailable marks a store that cannot be reached now (a database
// server down or restarting, a dropped connection): the request may
// succeed if retried. A write that failed this way may or may not have
// been applied, but it was not acknowledged.
var ErrUnavailable = errors.New("memory store unavailable")
