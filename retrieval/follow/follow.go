package follow

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/snap"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Follower keeps the indexes of a shared store (see the package doc).
type Follower struct {
	*keep.Base
	conf   Config
	feed   store.Shared
	spaces keep.Spaces[*space]
	// Counters for FollowStats, and the snapshot saver's guard.
	loads, evictions, caughtUp, snapLoads, snapSaves atomic.Int64
	savingDB                                         atomic.Bool
	lastPurge                                        atomic.Int64 // unix nanos
}

// space is a shared-store namespace's indexes and its progress through
// the store's change sequence.
type space struct {
	keep.Space
	dim     int           // the memory service's, for Fill
	loaded  chan struct{} // closed when the first build ends
	loadErr error         // set before loaded is closed
	// applied is the position of the last change applied; guarded by Mu.
	applied store.Cursor
	// through: every change with a sequence up to it is applied.
	through atomic.Uint64
	lastUse atomic.Int64 // unix nanos, for the LRU
	bytes   atomic.Int64 // estimated index memory, for IndexMemory
	// changedAt is when a catch-up last applied a change (unix nanos);
	// snapSeq the sequence of the store's snapshot as last known.
	changedAt atomic.Int64
	snapSeq   atomic.Uint64
	// recs: the memories as the indexes hold them (records.go).
	recs records
}

// New returns the follower of feed, b's store.
func New(b *keep.Base, feed store.Shared, conf Config) *Follower {
	return &Follower{Base: b, conf: conf, feed: feed}
}

// Start starts following the store. There is no start-up build: a
// namespace is built on its first use.
func (f *Follower) Start() {
	f.Built(nil)
	if !f.Closed() {
		f.startFollowing()
	}
}

// Write only writes to the store: the indexes learn of it from the change
// sequence, as they do of other processes' writes.
func (f *Follower) Write(ctx context.Context, _ []store.Item, put func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return put()
}

// Remove only deletes from the store: the change sequence carries it.
func (f *Follower) Remove(_, _ string, del func() error) error { return del() }

// Forget deletes the namespace in the store; like any delete, it reaches
// every follower's indexes (this one's included) through the change
// sequence, before their next search.
func (f *Follower) Forget(_ string, del func() (int, error)) (int, error) { return del() }

// Check refuses: other processes write between any catch-up and the
// comparison, so a disagreement would prove nothing; the indexes are
// rebuilt from the store whenever they are dropped.
func (f *Follower) Check(context.Context, bool) (keep.CheckReport, error) {
	return keep.CheckReport{}, fmt.Errorf("%w: retrieval: check compares indexes with a store of this process alone; a shared store is checked with `rerankd store check`", keep.ErrInvalid)
}

// Close stops following and waits; it has nothing to save: the snapshots
// are in the store.
func (f *Follower) Close() error {
	f.Shutdown(&f.spaces) // getSpace reads Closed under the same lock: no build starts after this
	return nil
}

// Names lists the resident namespaces.
func (f *Follower) Names() []string { return f.spaces.Names() }

// Stats describes ns's indexes: a shared namespace's come from the store
// (and its snapshot) on first use, with no start-up source or back-fill.
func (f *Follower) Stats(ns string) keep.Stats {
	if sp, _ := f.spaces.Get(ns); sp != nil {
		return sp.Stats(ns)
	}
	return keep.Stats{Namespace: ns, Ready: true}
}

// space returns ns's resident space, or nil.
func (f *Follower) space(ns string) *space {
	sp, _ := f.spaces.Get(ns)
	return sp
}

// drop forgets sp if it is still ns's space: the next use builds anew.
func (f *Follower) drop(ns string, sp *space) { f.spaces.Drop(ns, sp) }

// unavailable wraps a store failure of the follow path.
func unavailable(what, ns string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: the indexes of %q are catching up with the shared store (%s); retry shortly", keep.ErrUnavailable, ns, what)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %s of %q: %w", keep.ErrUnavailable, what, ns, err)
}

// Open returns ns's indexes holding every write committed before
// the call (nil when the namespace was never written), building them
// first if this process has none.
func (f *Follower) Open(ctx context.Context, ns string) (keep.Slot, error) {
	ctx, cancel := context.WithTimeout(ctx, f.conf.CatchUp)
	defer cancel()
	target, err := f.feed.Seq(ctx, ns)
	if err != nil {
		return nil, unavailable("reading the sequence", ns, err)
	}
	if target == 0 {
		return nil, nil
	}
	sp, err := f.sharedSpace(ns)
	if err != nil {
		return nil, err
	}
	sp.lastUse.Store(time.Now().UnixNano())
	if sp.through.Load() >= target {
		return sp, nil
	}
	select {
	case <-sp.loaded:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// A first build outlasting CatchUp (a large namespace): the
			// search scans the store instead, as during a start-up build
			// of a store of this process alone. The scan reads the store
			// itself, so it misses no acknowledged write; its answer
			// says "scan".
			return sp, nil
		}
		return nil, ctx.Err()
	}
	if sp.loadErr != nil {
		return nil, unavailable("building", ns, sp.loadErr)
	}
	if sp.through.Load() >= target {
		return sp, nil
	}
	if err := sp.Mu.LockCtx(ctx); err != nil {
		return nil, unavailable("catching up", ns, err)
	}
	defer sp.Mu.Unlock()
	if err := f.catchUpLocked(ctx, ns, sp, target); err != nil {
		return nil, unavailable("catching up", ns, err)
	}
	return sp, nil
}

// sharedSpace returns ns's space, creating it and starting its build when
// this process has none.
func (f *Follower) sharedSpace(ns string) (*space, error) {
	return f.spaces.Create(ns, func() (*space, error) {
		if f.Closed() { // read under the spaces' lock: Close fences on it before waiting for the background work
			return nil, keep.ErrClosed
		}
		ix, err := f.NewIndexes()
		if err != nil {
			return nil, err
		}
		sp := &space{dim: f.Dim(), loaded: make(chan struct{})}
		sp.Init(ix, false)
		sp.lastUse.Store(time.Now().UnixNano())
		f.Go(func() { f.load(ns, sp) })
		return sp, nil
	})
}

// load builds sp from the store: it reads the namespace's sequence, then
// every memory page by page. A memory written meanwhile may be read in
// either state; the catch-up from that sequence applies its latest, so
// the result is exact. A failed build drops the space, so the next use
// builds again.
func (f *Follower) load(ns string, sp *space) {
	t0 := time.Now()
	sp.Mu.Lock()
	inserted, err := f.loadLocked(ns, sp)
	if err == nil {
		sp.Lex.Store(true)
		sp.Vec.Store(true)
		sp.bytes.Store(sp.Indexes().Bytes() + sp.recs.size())
	}
	sp.Mu.Unlock()
	if err != nil {
		f.drop(ns, sp)
		sp.loadErr = err
		close(sp.loaded)
		if !errors.Is(err, keep.ErrStopped) {
			f.Logger().Warn("memory index build from the shared store failed; the next use retries", "namespace_len", len(ns), "err", err)
		}
		return
	}
	f.loads.Add(1)
	f.Logger().Debug("memory index built from the shared store", "memories", sp.Indexes().Lex.Len(), "took", time.Since(t0))
	// Within budget before the first search is let in, so that what it
	// and /metrics see is the state after the eviction.
	f.enforceBudget(ns)
	close(sp.loaded)
	if snaps := f.dbSnaps(); snaps != nil && inserted {
		f.saveDBSnapshot(snaps, ns, sp)
	}
}

// It reports whether the vectors were inserted one by one (no snapshot
// was loaded), so that the caller saves one.
func (f *Follower) loadLocked(ns string, sp *space) (bool, error) {
	seq, err := f.feed.Seq(f.Context(), ns)
	if err != nil {
		return false, err
	}
	from, vectors := seq, f.Dim() > 0
	if snaps := f.dbSnaps(); snaps != nil {
		idx, at, err := f.loadDBSnapshot(snaps, ns)
		switch {
		case err == nil:
			old := sp.Indexes()
			sp.Swap(old.WithVectors(idx))
			from, vectors = at, false // the changes after at bring the vectors up to date
			sp.snapSeq.Store(at)
			f.snapLoads.Add(1)
		case errNoSnapshot(err):
		case f.Context().Err() != nil:
			return false, keep.ErrStopped
		default:
			f.Logger().Warn("memory vector index snapshot in the shared store not used; inserting every vector", "why", err.Error())
			if snap.Kind(err) != "" {
				// Damaged, or made with another dimension or index
				// configuration: of no use to this process, and it would
				// keep a newer one of ours out. A store error leaves it.
				if err := snaps.DeleteSnapshot(f.Context(), ns); err != nil {
					f.Logger().Warn("removing an unusable memory vector index snapshot", "err", err)
				}
			}
		}
	}
	ix := sp.Indexes()
	if f.Context().Err() != nil {
		return false, keep.ErrStopped
	}
	for pg, err := range store.Pages(f.Store(), ns, f.PageSize(), f.Dim() > 0) {
		if err != nil {
			return false, err
		}
		if f.Context().Err() != nil {
			return false, keep.ErrStopped
		}
		for _, r := range pg.Records {
			if vectors {
				f.applyRecord(sp, ix, r)
			} else { // the vector index came from the snapshot
				ix.PutText(r.Memory)
				sp.recs.put(r)
			}
		}
	}
	sp.applied = store.Cursor{Seq: from + 1} // after every change of from
	sp.through.Store(from)
	return vectors, f.catchUpLocked(f.Context(), ns, sp, seq)
}

// catchUpLocked applies every change after sp's cursor, page by page, and
// records that everything up to target is applied: target was committed
// before the first page was read, so the drained feed holds it. sp.Mu is
// held. A catch-up cut short keeps what it applied.
func (f *Follower) catchUpLocked(ctx context.Context, ns string, sp *space, target uint64) error {
	ix := sp.Indexes()
	applied := 0
	defer func() {
		if applied > 0 {
			f.caughtUp.Add(int64(applied))
			sp.bytes.Store(ix.Bytes() + sp.recs.size())
			sp.changedAt.Store(time.Now().UnixNano())
		}
	}()
	for {
		changes, err := f.feed.Changes(ctx, ns, sp.applied, f.PageSize(), f.Dim() > 0)
		if errors.Is(err, store.ErrStale) {
			// Deletes this index has not applied were purged: rebuild.
			f.drop(ns, sp)
			return err
		}
		if err != nil {
			return err
		}
		applied += len(changes)
		for _, c := range changes {
			if c.Deleted {
				id := c.Record.Memory.ID
				ix.Remove(id)
				sp.recs.delete(id)
			} else {
				f.applyRecord(sp, ix, c.Record)
			}
			sp.applied = c.Cursor()
			target = max(target, c.Seq)
		}
		if len(changes) < f.PageSize() {
			break
		}
	}
	if sp.through.Load() < target {
		sp.through.Store(target)
	}
	if sp.Dirty.Load() {
		// An index refused a vector the store accepted: rebuild on the
		// next use rather than answer without it.
		f.drop(ns, sp)
	}
	return nil
}

// applyRecord puts one memory's current state into ix (replacing any
// earlier state of its ID).
func (f *Follower) applyRecord(sp *space, ix *index.Set, r store.Record) {
	sp.recs.put(r)
	sp.Put(ix, r.Memory, r.Vector)
}

// Space returns ns's indexes if resident (nil when not), for tests and
// tools that look inside.
func (f *Follower) Space(ns string) *keep.Space {
	if sp := f.space(ns); sp != nil {
		return &sp.Space
	}
	return nil
}

// Loaded is closed when the first build of ns's resident indexes ends
// (nil when ns is not resident).
func (f *Follower) Loaded(ns string) <-chan struct{} {
	if sp := f.space(ns); sp != nil {
		return sp.loaded
	}
	return nil
}
