package store

import (
	"context"
	"errors"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// Backend is the memory store contract. Two backends meet it: *Store (this
// package: one bbolt file held by one process, the embedded default) and
// retrieval/store/pgstore (PostgreSQL, shared by any number of processes).
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
// backend: bbolt runs them inside its transaction. An error a callback
// returns stops the iteration and is returned unchanged. List and ForEach
// promise no snapshot across pages (PostgreSQL reads page by page);
// callers that need one read a sequence first and catch up after, as the
// shared-store engine does. Vectors passed in or returned are never
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

var _ Backend = (*Store)(nil)

// ErrStale marks a change-sequence cursor older than the history a shared
// store still keeps (deletes are purged after a while): the follower may
// have missed a delete and must rebuild the namespace.
var ErrStale = errors.New("change cursor older than the kept history")

// ErrUnavailable marks a store that cannot be reached now (a database
// server down or restarting, a dropped connection): the request may
// succeed if retried. A write that failed this way may or may not have
// been applied, but it was not acknowledged.
var ErrUnavailable = errors.New("memory store unavailable")

// Cursor is a position in a shared backend's change sequence: the
// changes after it are those with a greater (Seq, ID).
type Cursor struct {
	Seq uint64
	ID  string
}

// Less orders cursors by sequence, then ID.
func (c Cursor) Less(o Cursor) bool {
	if c.Seq != o.Seq {
		return c.Seq < o.Seq
	}
	return c.ID < o.ID
}

// Change is a memory's state as of its last write, read from a shared
// backend's change sequence. Record holds the memory (with its vector when
// asked for); a deleted memory has Deleted set and only Namespace and ID
// in Record.Memory.
type Change struct {
	Seq     uint64
	Deleted bool
	Record  Record
}

// Cursor is the position just after c.
func (c Change) Cursor() Cursor { return Cursor{Seq: c.Seq, ID: c.Record.Memory.ID} }

// Feed is what a backend shared by several processes offers so that each
// process's in-memory indexes can follow the writes of all of them. Every
// transaction that changes a namespace's memories takes the namespace's
// next sequence number, and transactions of one namespace commit in sequence
// order, so a reader that has applied every change up to Seq(ns) has seen
// every write acknowledged before it asked.
type Feed interface {
	// Seq returns ns's committed change sequence (0 for a namespace never
	// written).
	Seq(ctx context.Context, ns string) (uint64, error)
	// Seqs returns the committed sequences of names (absent: never
	// written), or of every namespace when names is nil, in one read: a
	// follower polls the namespaces it holds, not the whole store.
	Seqs(ctx context.Context, names []string) (map[string]uint64, error)
	// Changes returns up to limit changes of ns after the cursor, in
	// (Seq, ID) order: each changed memory once, in its latest state. A
	// cursor from before the oldest purged delete is ErrStale.
	Changes(ctx context.Context, ns string, after Cursor, limit int, withVectors bool) ([]Change, error)
	// Listen calls fn with a namespace's name soon after each commit that
	// changed it, by any process, until ctx is done or the connection is
	// lost (then it returns the error; the caller listens again).
	// Notifications can be missed while not listening: callers also poll
	// Seqs.
	Listen(ctx context.Context, fn func(ns string)) error
}

// ForEachSettings resolves ForEach options, for backends outside this
// package: the progress callback (nil if none) and its interval.
func ForEachSettings(opts ...ForEachOption) (progress func(done, total int), every int) {
	var cfg forEachConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg.progress, cfg.every
}
