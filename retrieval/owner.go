package retrieval

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
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

// lockSpaces locks the spaces of the items' namespaces (creating them) in
// sorted order, so concurrent batches cannot deadlock.
func (e *owner) lockSpaces(items []store.Item) (map[string]*space, func(), error) {
	spaces := map[string]*space{}
	for _, it := range items {
		ns := it.Memory.Namespace
		if spaces[ns] != nil {
			continue
		}
		sp, err := e.space(ns, true)
		if err != nil {
			return nil, nil, err
		}
		spaces[ns] = sp
	}
	names := make([]string, 0, len(spaces))
	for ns := range spaces {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		spaces[ns].mu.Lock()
	}
	return spaces, func() {
		for _, ns := range names {
			spaces[ns].mu.Unlock()
		}
	}, nil
}

// indexLocked applies one durable write to sp's indexes; sp.mu is held.
// vec nil removes any previous vector of id (the store did the same).
func (e *owner) indexLocked(sp *space, m memory.Memory, vec []float32) {
	id := m.ID
	if sp.own.touched != nil {
		sp.own.touched[id] = struct{}{}
	}
	sp.own.noteWrite()
	if err := sp.ix().Put(m, vec); err != nil {
		// Vectors were checked before the write, so this is an index
		// fault; the store has the vector, and Check will rebuild.
		sp.dirty.Store(true)
	}
}

// fill loads text, time and vector of each candidate from the store.
// Candidates deleted since the index answered are dropped.
func (e *owner) fill(ns string, _ *space, cands []post.Candidate) ([]post.Candidate, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	recs, err := e.st.GetMany(ns, ids, true)
	if err != nil {
		return nil, fmt.Errorf("retrieval: load candidates: %w", mapStoreErr(err))
	}
	byID := make(map[string]store.Record, len(recs))
	for _, r := range recs {
		byID[r.Memory.ID] = r
	}
	out := cands[:0]
	for _, c := range cands {
		r, ok := byID[c.ID]
		if !ok {
			continue
		}
		complete(&c, r, e.dim)
		out = append(out, c)
	}
	return out, nil
}
