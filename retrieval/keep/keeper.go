package keep

import (
	"context"

	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Keeper keeps the namespaces' indexes of one kind of store: the owner
// (retrieval/owner) for a store of this process alone, which it indexes at
// start and whose writes all pass through it; the follower
// (retrieval/follow) for a store shared with other processes, whose
// indexes are caches that follow the store's change sequence. The facade
// (retrieval.Service) calls these methods of either keeper alike; what
// only a follower can answer (its counters, whether the shared store can
// be reached) the facade asks through an interface of its own, which the
// owner does not implement.
type Keeper interface {
	// Start begins the keeper's background work (Service.Start).
	Start()
	// Open returns ns's indexes for a search, holding every write
	// acknowledged before the call; nil when ns was never written.
	Open(ctx context.Context, ns string) (Slot, error)
	// Write makes items durable by calling put, whose error it returns
	// unchanged, and brings the indexes up to them.
	Write(ctx context.Context, items []store.Item, put func() error) error
	// Remove deletes ns/id by calling del, whose error it returns
	// unchanged, and from the indexes.
	Remove(ns, id string, del func() error) error
	// Forget deletes every memory of ns by calling del, whose result it
	// returns unchanged, and empties ns's indexes (and, for the owner,
	// removes its snapshot file).
	Forget(ns string, del func() (int, error)) (int, error)
	// Check compares the indexes with the store (Service.Check).
	Check(ctx context.Context, repair bool) (CheckReport, error)
	// Close stops the background work, waits for it, and finishes; its
	// error is about what could not be saved.
	Close() error
	// Names lists the namespaces the keeper holds indexes of, and Stats
	// describes one of them (zero values, Ready, for one it does not hold).
	Names() []string
	Stats(ns string) Stats
	// SnapshotsAt says, for people, where the vector index snapshots are
	// kept: a directory, "in the database", or "off".
	SnapshotsAt() string
}

// Slot is one namespace's indexes as a search sees them.
type Slot interface {
	// Indexes returns the current indexes; load once per search.
	Indexes() *index.Set
	// LexReady and VecReady say whether the lexical and the vector index
	// are built.
	LexReady() bool
	VecReady() bool
	// Fill completes cands with their memories (text, time, source,
	// metadata, vector), dropping those deleted since the indexes
	// answered.
	Fill(cands []post.Candidate) ([]post.Candidate, error)
}
