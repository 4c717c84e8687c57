package store

import (
	"context"
	"io"
	"time"
)

// Shared is a backend shared by several processes (retrieval/store/pgstore):
// each process keeps in-memory indexes that follow the writes of all of
// them through the Feed, keeps vector index snapshots in the store for the
// others to load, purges the tombstones the Feed no longer needs, and can
// be asked whether it is reachable.
type Shared interface {
	Backend
	Feed
	Snapshots
	Purger
	Pinger
}

// Snapshots keeps one opaque snapshot of a namespace's vector index in a
// shared store, taken at a change sequence of that namespace.
type Snapshots interface {
	// SnapshotSeq returns the change sequence of ns's stored snapshot, or
	// 0 when it has none.
	SnapshotSeq(ctx context.Context, ns string) (uint64, error)
	// PutSnapshot stores ns's snapshot taken at change sequence seq,
	// written by write, replacing the stored one. It writes nothing and
	// returns false when the stored snapshot is at seq or later.
	PutSnapshot(ctx context.Context, ns string, seq uint64, write func(io.Writer) error) (bool, error)
	// Snapshot calls read with ns's stored snapshot and its change
	// sequence; ErrNotFound when ns has none; read's error is returned as
	// it is.
	Snapshot(ctx context.Context, ns string, read func(seq uint64, r io.Reader) error) error
	// DeleteSnapshot removes ns's snapshot.
	DeleteSnapshot(ctx context.Context, ns string) error
}

// Purger removes the tombstones of deletes made before a time, after which
// a Feed cursor from before them is ErrStale.
type Purger interface {
	// PurgeTombstones returns how many tombstones it removed.
	PurgeTombstones(ctx context.Context, before time.Time) (int64, error)
}

// Pinger is a backend that can be unreachable (a database server): Ping
// returns nil when it answers now, else why not.
type Pinger interface {
	Ping(ctx context.Context) error
}

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
