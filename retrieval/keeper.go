package retrieval

import (
	"context"

	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// keeper keeps the namespaces' indexes of one kind of store: the owner
// (owner.go) for a store of this process alone, which it indexes at start
// and whose writes all pass through it; the follower (follow.go) for a
// store shared with other processes, whose indexes are caches that follow
// the store's change sequence. New picks one from the store; the facade
// calls only these methods, never asking which keeper it has.
type keeper interface {
	// start begins the keeper's background work (Engine.Start).
	start()
	// open returns ns's indexes for a search, holding every write
	// acknowledged before the call; nil when ns was never written.
	open(ctx context.Context, ns string) (*space, error)
	// fill completes the candidates of a search of sp with their
	// memories, dropping those deleted since the indexes answered.
	fill(ns string, sp *space, cands []post.Candidate) ([]post.Candidate, error)
	// write makes items durable by calling put, whose error it returns
	// unchanged, and brings the indexes up to them.
	write(ctx context.Context, items []store.Item, put func() error) error
	// remove deletes ns/id by calling del, whose error it returns
	// unchanged, and from the indexes.
	remove(ns, id string, del func() error) error
	// check compares the indexes with the store (Engine.Check).
	check(ctx context.Context, repair bool) (CheckReport, error)
	// close finishes after the background work has stopped
	// (Engine.Close); its error is about what could not be saved.
	close() error
	// describe adds the keeper's own facts about sp to st (Engine.Stats).
	describe(sp *space, st *Stats)
	// followStats and ping report on a shared store (zero and nil for a
	// store of this process alone).
	followStats() FollowStats
	ping(ctx context.Context) error
}
