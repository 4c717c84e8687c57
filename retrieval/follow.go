package retrieval

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/store"
)

// A shared store (one that implements store.Shared) is written by other
// processes too, so this process's indexes are caches of it:
//
//   - a namespace's indexes are built from the store on its first use, in
//     the background, and dropped when Config.Follow.IndexMemory is exceeded
//     (least recently used first), to be rebuilt on a later use;
//   - they follow the store's change sequence: woken by the store's
//     notifications, and by polling every Config.Follow.Poll for those missed;
//   - a search first asks the store for the namespace's committed
//     sequence and catches up to it, so it reflects every write
//     acknowledged by any process before it began; when that takes longer
//     than Config.Follow.CatchUp it fails with ErrUnavailable instead of
//     answering from stale indexes. A first build that outlasts
//     Config.Follow.CatchUp is not waited for: the search scans the store (the
//     scan level, as during the start-up build of an unshared store).
//
// Writes go to the store only: the indexes learn of them from the change
// sequence like any other process's writes, so there is one way for an
// index to change and a write never waits for an index build.

// follower keeps the indexes of a shared store (see above).
type follower struct {
	*core
	feed store.Shared
	// Counters for FollowStats, and the snapshot saver's guard.
	loads, evictions, caughtUp, snapLoads, snapSaves atomic.Int64
	savingDB                                         atomic.Bool
	lastPurge                                        atomic.Int64 // unix nanos
}

// start closes the start-up channels (there is no start-up build: a
// namespace is built on its first use) and starts following the store.
func (e *follower) start() {
	close(e.built)
	close(e.afterBuild)
	close(e.backfilled)
	if !e.closed.Load() {
		e.startFollowing()
	}
}

// write only writes to the store: the indexes learn of it from the change
// sequence, as they do of other processes' writes.
func (e *follower) write(ctx context.Context, _ []store.Item, put func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return put()
}

// remove only deletes from the store: the change sequence carries it.
func (e *follower) remove(_, _ string, del func() error) error { return del() }

// check refuses: other processes write between any catch-up and the
// comparison, so a disagreement would prove nothing; the indexes are
// rebuilt from the store whenever they are dropped.
func (e *follower) check(context.Context, bool) (CheckReport, error) {
	return CheckReport{}, fmt.Errorf("%w: retrieval: check compares indexes with a store of this process alone; a shared store is checked with `rerankd store check`", ErrInvalid)
}

// close has nothing to save: the snapshots are in the store.
func (e *follower) close() error { return nil }

// describe adds nothing: a shared namespace's indexes come from the store
// (and its snapshot) on first use, with no start-up source or back-fill.
func (e *follower) describe(*space, *Stats) {}

// followState is a shared-store namespace's progress through the store's
// change sequence.
type followState struct {
	loaded  chan struct{} // closed when the first build ends
	loadErr error         // set before loaded is closed
	// applied is the position of the last change applied; guarded by
	// space.mu.
	applied store.Cursor
	// through: every change with a sequence up to it is applied.
	through atomic.Uint64
	lastUse atomic.Int64 // unix nanos, for the LRU
	bytes   atomic.Int64 // estimated index memory, for IndexMemory
	// changedAt is when a catch-up last applied a change (unix nanos);
	// snapSeq the sequence of the store's snapshot as last known.
	changedAt atomic.Int64
	snapSeq   atomic.Uint64
	// recs: the memories as the indexes hold them (follow_records.go).
	recs records
}

// unavailable wraps a store failure of the follow path.
func unavailable(what, ns string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: the indexes of %q are catching up with the shared store (%s); retry shortly", ErrUnavailable, ns, what)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %s of %q: %w", ErrUnavailable, what, ns, err)
}

// open returns ns's indexes holding every write committed before
// the call (nil when the namespace was never written), building them
// first if this process has none.
func (e *follower) open(ctx context.Context, ns string) (*space, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Follow.CatchUp)
	defer cancel()
	target, err := e.feed.Seq(ctx, ns)
	if err != nil {
		return nil, unavailable("reading the sequence", ns, err)
	}
	if target == 0 {
		return nil, nil
	}
	sp, err := e.sharedSpace(ns)
	if err != nil {
		return nil, err
	}
	fs := sp.follow
	fs.lastUse.Store(time.Now().UnixNano())
	if fs.through.Load() >= target {
		return sp, nil
	}
	select {
	case <-fs.loaded:
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
	if fs.loadErr != nil {
		return nil, unavailable("building", ns, fs.loadErr)
	}
	if fs.through.Load() >= target {
		return sp, nil
	}
	if err := sp.mu.LockCtx(ctx); err != nil {
		return nil, unavailable("catching up", ns, err)
	}
	defer sp.mu.Unlock()
	if err := e.catchUpLocked(ctx, ns, sp, target); err != nil {
		return nil, unavailable("catching up", ns, err)
	}
	return sp, nil
}

// sharedSpace returns ns's space, creating it and starting its build when
// this process has none.
func (e *follower) sharedSpace(ns string) (*space, error) {
	e.mu.RLock()
	sp := e.spaces[ns]
	e.mu.RUnlock()
	if sp != nil {
		return sp, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sp = e.spaces[ns]; sp != nil {
		return sp, nil
	}
	if e.closed.Load() { // checked under e.mu: Close fences on it before waiting for e.bg
		return nil, ErrClosed
	}
	sp, err := e.newSpace()
	if err != nil {
		return nil, err
	}
	sp.lexReady.Store(false)
	sp.vecReady.Store(false)
	sp.follow = &followState{loaded: make(chan struct{})}
	sp.follow.lastUse.Store(time.Now().UnixNano())
	e.spaces[ns] = sp
	e.bg.Add(1)
	go e.load(ns, sp)
	return sp, nil
}

// load builds sp from the store: it reads the namespace's sequence, then
// every memory page by page. A memory written meanwhile may be read in
// either state; the catch-up from that sequence applies its latest, so
// the result is exact. A failed build drops the space, so the next use
// builds again.
func (e *follower) load(ns string, sp *space) {
	defer e.bg.Done()
	fs := sp.follow
	t0 := time.Now()
	sp.mu.Lock()
	inserted, err := e.loadLocked(ns, sp)
	if err == nil {
		sp.lexReady.Store(true)
		sp.vecReady.Store(true)
		fs.bytes.Store(sp.ix().Bytes() + fs.recs.size())
	}
	sp.mu.Unlock()
	if err != nil {
		e.drop(ns, sp)
		fs.loadErr = err
		close(fs.loaded)
		if !errors.Is(err, errStopped) {
			e.log.Warn("memory index build from the shared store failed; the next use retries", "namespace_len", len(ns), "err", err)
		}
		return
	}
	e.loads.Add(1)
	e.log.Debug("memory index built from the shared store", "memories", sp.ix().Lex.Len(), "took", time.Since(t0))
	// Within budget before the first search is let in, so that what it
	// and /metrics see is the state after the eviction.
	e.enforceBudget(ns)
	close(fs.loaded)
	if snaps := e.dbSnaps(); snaps != nil && inserted {
		e.saveDBSnapshot(snaps, ns, sp)
	}
}

// It reports whether the vectors were inserted one by one (no snapshot
// was loaded), so that the caller saves one.
func (e *follower) loadLocked(ns string, sp *space) (bool, error) {
	seq, err := e.feed.Seq(e.ctx, ns)
	if err != nil {
		return false, err
	}
	from, vectors := seq, e.dim > 0
	if snaps := e.dbSnaps(); snaps != nil {
		idx, at, err := e.loadDBSnapshot(snaps, ns)
		switch {
		case err == nil:
			old := sp.ix()
			sp.cur.Store(old.WithVectors(idx))
			from, vectors = at, false // the changes after at bring the vectors up to date
			sp.follow.snapSeq.Store(at)
			e.snapLoads.Add(1)
		case errNoSnapshot(err):
		case e.ctx.Err() != nil:
			return false, errStopped
		default:
			e.log.Warn("memory vector index snapshot in the shared store not used; inserting every vector", "why", err.Error())
			if missKind(err) != "" {
				// Damaged, or made with another dimension or index
				// configuration: of no use to this engine, and it would
				// keep a newer one of ours out. A store error leaves it.
				if err := snaps.DeleteSnapshot(e.ctx, ns); err != nil {
					e.log.Warn("removing an unusable memory vector index snapshot", "err", err)
				}
			}
		}
	}
	ix := sp.ix()
	if e.ctx.Err() != nil {
		return false, errStopped
	}
	for pg, err := range store.Pages(e.st, ns, e.cfg.PageSize, e.dim > 0) {
		if err != nil {
			return false, err
		}
		if e.ctx.Err() != nil {
			return false, errStopped
		}
		for _, r := range pg.Records {
			if vectors {
				e.applyRecord(sp, ix, r)
			} else { // the vector index came from the snapshot
				ix.PutText(r.Memory)
				sp.follow.recs.put(r)
			}
		}
	}
	sp.follow.applied = store.Cursor{Seq: from + 1} // after every change of from
	sp.follow.through.Store(from)
	return vectors, e.catchUpLocked(e.ctx, ns, sp, seq)
}

// catchUpLocked applies every change after sp's cursor, page by page, and
// records that everything up to target is applied: target was committed
// before the first page was read, so the drained feed holds it. sp.mu is
// held. A catch-up cut short keeps what it applied.
func (e *follower) catchUpLocked(ctx context.Context, ns string, sp *space, target uint64) error {
	fs := sp.follow
	ix := sp.ix()
	applied := 0
	defer func() {
		if applied > 0 {
			e.caughtUp.Add(int64(applied))
			fs.bytes.Store(ix.Bytes() + fs.recs.size())
			fs.changedAt.Store(time.Now().UnixNano())
		}
	}()
	for {
		changes, err := e.feed.Changes(ctx, ns, fs.applied, e.cfg.PageSize, e.dim > 0)
		if errors.Is(err, store.ErrStale) {
			// Deletes this index has not applied were purged: rebuild.
			e.drop(ns, sp)
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
				fs.recs.delete(id)
			} else {
				e.applyRecord(sp, ix, c.Record)
			}
			fs.applied = c.Cursor()
			target = max(target, c.Seq)
		}
		if len(changes) < e.cfg.PageSize {
			break
		}
	}
	if fs.through.Load() < target {
		fs.through.Store(target)
	}
	if sp.dirty.Load() {
		// An index refused a vector the store accepted: rebuild on the
		// next use rather than answer without it.
		e.drop(ns, sp)
	}
	return nil
}

// applyRecord puts one memory's current state into ix (replacing any
// earlier state of its ID).
func (e *follower) applyRecord(sp *space, ix *index.Set, r store.Record) {
	sp.follow.recs.put(r)
	if err := ix.Put(r.Memory, r.Vector); err != nil {
		sp.dirty.Store(true)
	}
}
