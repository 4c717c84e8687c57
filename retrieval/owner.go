package retrieval

import (
	"context"
	"sync"

	"github.com/rerankd/rerankd/retrieval/store"
)

// owner keeps the indexes of a store of this process alone: built from
// the store at Start (build.go; vector indexes from snapshot files where
// current, snapshot.go), updated by every write under the namespace's
// lock, back-filled with vectors (backfill.go) and compared with the
// store by Check (check.go).
type owner struct {
	*core
	snapMu    sync.Mutex // one snapshot round at a time
	snapClean bool       // leftover temporary files removed (under snapMu)
}

func (e *owner) open(_ context.Context, ns string) (*space, error) { return e.space(ns, false) }

// space is core's, with the owner's state on every namespace it creates.
func (e *owner) space(ns string, create bool) (*space, error) {
	return e.spaceWith(ns, create, func(sp *space) { sp.own = &ownState{} })
}

func (e *owner) describe(sp *space, st *Stats) {
	if in := sp.own.info.Load(); in != nil {
		st.VectorSource, st.SnapshotMiss = in.source, in.miss
	}
	st.Backfilled, st.BackfillFailed = int(sp.own.backfilled.Load()), int(sp.own.backfillFailed.Load())
}

func (e *owner) write(ctx context.Context, items []store.Item, put func() error) error {
	spaces, unlock, err := e.lockSpaces(items)
	if err != nil {
		return err
	}
	defer unlock()
	if err := ctx.Err(); err != nil {
		return err // nothing written yet: the client is gone
	}
	if err := put(); err != nil {
		return err
	}
	// Durable from here on. Later duplicates in the batch win, as in the store.
	for _, it := range items {
		e.indexLocked(spaces[it.Memory.Namespace], it.Memory, it.Vector)
	}
	return nil
}

func (e *owner) remove(ns, id string, del func() error) error {
	sp, err := e.space(ns, false)
	if err != nil {
		return err
	}
	if sp != nil {
		sp.mu.Lock()
		defer sp.mu.Unlock()
	}
	if err := del(); err != nil {
		return err
	}
	if sp != nil {
		if sp.own.touched != nil {
			sp.own.touched[id] = struct{}{}
		}
		sp.own.noteWrite()
		sp.ix().Remove(id)
	}
	return nil
}

func (e *owner) close() error { return e.saveSnapshots("close") }

func (e *owner) followStats() FollowStats { return FollowStats{} }

func (e *owner) ping(context.Context) error { return nil }
