package owner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Owner keeps the indexes of a store of this process alone: built from
// the store at Start (build.go; vector indexes from snapshot files where
// current, snapshot.go), updated by every write under the namespace's
// lock, back-filled with vectors (backfill.go) and compared with the
// store by Check (check.go).
type Owner struct {
	*keep.Base
	conf   Config
	spaces keep.Spaces[*space]

	snapMu    sync.Mutex // one snapshot round at a time
	snapClean bool       // leftover temporary files removed (under snapMu)
	// afterBuild is closed when the snapshots after the build are saved,
	// backfilled when the back-fill ends (or was not run); both are
	// closed by the background goroutine, also when it is stopped.
	afterBuild, backfilled chan struct{}
}

// space is one namespace's indexes and what the owner keeps beside them.
type space struct {
	keep.Space
	o  *Owner
	ns string
	// touched holds IDs written since the start-up build began; the build
	// skips them. nil once both phases are done. Guarded by Mu.
	touched map[string]struct{}
	// atStart: the namespace was in the store at New (immutable).
	atStart bool
	// startGen is the store's vector generation of the namespace at New,
	// before any write through this owner: a snapshot saved at it holds
	// exactly the vectors the store had then.
	startGen store.VectorGen
	// snapGen is the generation of the namespace's snapshot file, zero
	// when none is known; guarded by Mu.
	snapGen store.VectorGen
	// lastWrite is when a write last changed the namespace (unix nanos), 0
	// when nothing changed since its last snapshot; for SnapshotIdle.
	lastWrite atomic.Int64
	// info says where the vector index came from, for Stats.
	info atomic.Pointer[vecInfo]
	// Back-fill counters, for Stats.
	backfilled, backfillFailed atomic.Int64
}

// vecInfo is how a namespace's vector index was made at start.
type vecInfo struct{ source, miss string }

// New returns the owner of b's store. The namespaces already in the store
// get empty, not-ready indexes: until Start's build reaches them,
// searches there use the scan level.
func New(b *keep.Base, conf Config) (*Owner, error) {
	o := &Owner{Base: b, conf: conf, afterBuild: make(chan struct{}), backfilled: make(chan struct{})}
	if err := o.initSnapshots(); err != nil {
		return nil, err
	}
	names, err := o.Store().Namespaces()
	if err != nil {
		return nil, fmt.Errorf("retrieval.New: %w", err)
	}
	// Read before any write through this owner can move them: a snapshot
	// at these generations is exact, and writes from now on are replayed
	// onto it (they are in touched).
	gens, err := o.Store().VectorGens()
	if err != nil {
		return nil, fmt.Errorf("retrieval.New: %w", err)
	}
	for _, ns := range names {
		sp, err := o.newSpace(ns)
		if err != nil {
			return nil, err
		}
		sp.touched, sp.atStart, sp.startGen = map[string]struct{}{}, true, gens[ns]
		sp.Lex.Store(false)
		sp.Vec.Store(o.Dim() == 0) // no vector phase without a dimension
		o.spaces.SetLocked(ns, sp)
	}
	return o, nil
}

// initSnapshots decides whether the owner keeps snapshots: only with a
// SnapshotDir and a vector dimension.
// A SnapshotDir that exists but is not a directory is a configuration
// error; anything else wrong with it is found, logged and survived later.
func (o *Owner) initSnapshots() error {
	dir := o.conf.SnapshotDir
	if dir == "" || o.Dim() == 0 {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("retrieval.New: SnapshotDir %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		o.Logger().Warn("memory index snapshots: cannot use the directory; indexes will be rebuilt at start", "dir", dir, "err", err)
	}
	return nil
}

// newSpace returns empty indexes for ns, marked ready (a namespace created
// after start has nothing to rebuild).
func (o *Owner) newSpace(ns string) (*space, error) {
	ix, err := o.NewIndexes()
	if err != nil {
		return nil, err
	}
	sp := &space{o: o, ns: ns}
	sp.Init(ix, true)
	return sp, nil
}

// space returns ns's indexes, creating them when create is set.
func (o *Owner) space(ns string, create bool) (*space, error) {
	if !create {
		sp, _ := o.spaces.Get(ns)
		return sp, nil
	}
	return o.spaces.Create(ns, func() (*space, error) { return o.newSpace(ns) })
}

// Open returns ns's indexes: every acknowledged write passed through them.
func (o *Owner) Open(_ context.Context, ns string) (keep.Slot, error) {
	if sp, _ := o.spaces.Get(ns); sp != nil {
		return sp, nil
	}
	return nil, nil
}

// Names lists the namespaces held.
func (o *Owner) Names() []string { return o.spaces.Names() }

// Stats describes ns's indexes and where they came from.
func (o *Owner) Stats(ns string) keep.Stats {
	sp, _ := o.spaces.Get(ns)
	if sp == nil {
		return keep.Stats{Namespace: ns, Ready: true}
	}
	st := sp.Stats(ns)
	if in := sp.info.Load(); in != nil {
		st.VectorSource, st.SnapshotMiss = in.source, in.miss
	}
	st.Backfilled, st.BackfillFailed = int(sp.backfilled.Load()), int(sp.backfillFailed.Load())
	return st
}

// Write writes items to the store under their namespaces' locks, then
// indexes them.
func (o *Owner) Write(ctx context.Context, items []store.Item, put func() error) error {
	spaces, unlock, err := o.lockSpaces(items)
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
		o.indexLocked(spaces[it.Memory.Namespace], it.Memory, it.Vector)
	}
	return nil
}

// Remove deletes from the store, then from the indexes, under the
// namespace's lock.
func (o *Owner) Remove(ns, id string, del func() error) error {
	sp, err := o.space(ns, false)
	if err != nil {
		return err
	}
	if sp != nil {
		sp.Mu.Lock()
		defer sp.Mu.Unlock()
	}
	if err := del(); err != nil {
		return err
	}
	if sp != nil {
		if sp.touched != nil {
			sp.touched[id] = struct{}{}
		}
		sp.noteWrite()
		sp.Indexes().Remove(id)
	}
	return nil
}

// Forget deletes ns in the store under the namespace's lock, then gives
// it empty indexes and removes its snapshot file. A start-up build of ns
// still running marks it dirty, so that Check rebuilds it from the store.
func (o *Owner) Forget(ns string, del func() (int, error)) (int, error) {
	sp, err := o.space(ns, false)
	if err != nil {
		return 0, err
	}
	if sp != nil {
		sp.Mu.Lock()
		defer sp.Mu.Unlock()
	}
	n, err := del()
	if err != nil {
		return 0, err
	}
	if sp != nil {
		ix, err := o.NewIndexes()
		if err != nil {
			sp.Dirty.Store(true)
			return n, nil
		}
		sp.Swap(ix)
		if sp.touched != nil {
			sp.Dirty.Store(true)
		}
		sp.noteWrite()
	}
	if o.conf.SnapshotDir != "" {
		if err := o.removeSnapshot(ns); err != nil {
			o.Logger().Warn("forget: snapshot file not removed; the next start finds it stale", "namespace", ns, "err", err)
		}
	}
	return n, nil
}

// Close stops the build, the back-fill and the snapshot saver, waits for
// them, then saves the snapshots of the namespaces whose vectors changed
// since theirs.
func (o *Owner) Close() error {
	o.Shutdown(&o.spaces)
	return o.saveSnapshots("close")
}

// lockSpaces locks the spaces of the items' namespaces (creating them) in
// sorted order, so concurrent batches cannot deadlock.
func (o *Owner) lockSpaces(items []store.Item) (map[string]*space, func(), error) {
	spaces := map[string]*space{}
	for _, it := range items {
		ns := it.Memory.Namespace
		if spaces[ns] != nil {
			continue
		}
		sp, err := o.space(ns, true)
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
		spaces[ns].Mu.Lock()
	}
	return spaces, func() {
		for _, ns := range names {
			spaces[ns].Mu.Unlock()
		}
	}, nil
}

// indexLocked applies one durable write to sp's indexes; sp.Mu is held.
// vec nil removes any previous vector of id (the store did the same).
func (o *Owner) indexLocked(sp *space, m memory.Memory, vec []float32) {
	id := m.ID
	if sp.touched != nil {
		sp.touched[id] = struct{}{}
	}
	sp.noteWrite()
	// Vectors were checked before the write, so a refusal is an index
	// fault; the store has the vector, and Check will rebuild.
	sp.Put(sp.Indexes(), m, vec)
}

// Fill loads text, time and vector of each candidate from the store.
// Candidates deleted since the index answered are dropped.
func (sp *space) Fill(cands []post.Candidate) ([]post.Candidate, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	recs, err := sp.o.Store().GetMany(sp.ns, ids, true)
	if err != nil {
		return nil, fmt.Errorf("retrieval: load candidates: %w", keep.MapStoreErr(err))
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
		keep.Complete(&c, r, sp.o.Dim())
		out = append(out, c)
	}
	return out, nil
}

// Space returns ns's indexes as the owner holds them (nil when none), for
// tests and tools that look inside.
func (o *Owner) Space(ns string) *keep.Space {
	if sp, _ := o.spaces.Get(ns); sp != nil {
		return &sp.Space
	}
	return nil
}

// AfterBuild is closed when the snapshots after the start-up build are
// saved (or the build was stopped), Backfilled when the back-fill ends
// (or was not run).
func (o *Owner) AfterBuild() <-chan struct{} { return o.afterBuild }

// Backfilled is closed when the start-up back-fill of vectors ends (or
// was not run).
func (o *Owner) Backfilled() <-chan struct{} { return o.backfilled }
