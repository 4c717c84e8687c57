package retrieval

import (
	"context"
	"fmt"
)

// FollowStats counts what a shared-store engine did since it started.
type FollowStats struct {
	// Loaded is how many namespaces were resident at the time of the
	// call, and Bytes their estimated index memory.
	Loaded int
	Bytes  int64
	// Builds counts namespace builds from the store, Evictions the
	// namespaces dropped for Config.Follow.IndexMemory, Changes the changes
	// applied from the change sequence, SnapshotLoads the builds whose
	// vector index came from the store's snapshot, SnapshotSaves the
	// snapshots this process saved there.
	Builds, Evictions, Changes, SnapshotLoads, SnapshotSaves int64
}

// Follow reports the shared-store follower's counters (zero for a store
// of this process alone).
func (e *Engine) Follow() FollowStats { return e.k.followStats() }

func (e *follower) followStats() FollowStats {
	st := FollowStats{Builds: e.loads.Load(), Evictions: e.evictions.Load(), Changes: e.caughtUp.Load(),
		SnapshotLoads: e.snapLoads.Load(), SnapshotSaves: e.snapSaves.Load()}
	e.mu.RLock()
	for _, sp := range e.spaces {
		st.Loaded++
		st.Bytes += sp.follow.bytes.Load()
	}
	e.mu.RUnlock()
	return st
}

// Config returns the engine's configuration, defaults applied.
func (e *Engine) Config() Config { return e.cfg }

// Shared reports whether the engine's store is shared with other
// processes (its indexes follow the store's change sequence).
func (e *Engine) Shared() bool { return e.shared }

// Ping checks that a shared store can be reached; nil for a store of this
// process alone.
func (e *Engine) Ping(ctx context.Context) error { return e.k.ping(ctx) }

func (e *follower) ping(ctx context.Context) error {
	if err := e.feed.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}
