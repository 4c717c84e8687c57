package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/store"
)

// A shared store (one that implements store.Feed) is written by other
// processes too, so this process's indexes are caches of it:
//
//   - a namespace's indexes are built from the store on its first use, in
//     the background, and dropped when Config.IndexMemory is exceeded
//     (least recently used first), to be rebuilt on a later use;
//   - they follow the store's change sequence: woken by the store's
//     notifications, and by polling every Config.Poll for those missed;
//   - a search first asks the store for the namespace's committed
//     sequence and catches up to it, so it reflects every write
//     acknowledged by any process before it began; when that takes longer
//     than Config.CatchUp it fails with ErrUnavailable instead of
//     answering from stale indexes. A first build that outlasts
//     Config.CatchUp is not waited for: the search scans the store (the
//     scan level, as during the start-up build of an unshared store).
//
// Writes go to the store only: the indexes learn of them from the change
// sequence like any other process's writes, so there is one way for an
// index to change and a write never waits for an index build.

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
}

// ctxMutex is a mutex whose Lock can give up when a context ends (a search
// waiting behind a long catch-up). The zero value is unlocked.
type ctxMutex struct {
	once sync.Once
	ch   chan struct{}
}

func (m *ctxMutex) c() chan struct{} {
	m.once.Do(func() { m.ch = make(chan struct{}, 1) })
	return m.ch
}

func (m *ctxMutex) Lock()   { m.c() <- struct{}{} }
func (m *ctxMutex) Unlock() { <-m.c() }

// TryLock locks if the mutex is free and reports whether it did.
func (m *ctxMutex) TryLock() bool {
	select {
	case m.c() <- struct{}{}:
		return true
	default:
		return false
	}
}

// LockCtx locks, or returns ctx's error if ctx ends first.
func (m *ctxMutex) LockCtx(ctx context.Context) error {
	select {
	case m.c() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

// followSpace returns ns's indexes holding every write committed before
// the call (nil when the namespace was never written), building them
// first if this process has none.
func (e *Engine) followSpace(ctx context.Context, ns string) (*space, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CatchUp)
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
func (e *Engine) sharedSpace(ns string) (*space, error) {
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
func (e *Engine) load(ns string, sp *space) {
	defer e.bg.Done()
	fs := sp.follow
	t0 := time.Now()
	sp.mu.Lock()
	inserted, err := e.loadLocked(ns, sp)
	if err == nil {
		sp.lexReady.Store(true)
		sp.vecReady.Store(true)
		fs.bytes.Store(sp.ix().bytes(e.dim))
	}
	sp.mu.Unlock()
	fs.loadErr = err
	close(fs.loaded)
	if err != nil {
		e.drop(ns, sp)
		if !errors.Is(err, errStopped) {
			e.log.Warn("memory index build from the shared store failed; the next use retries", "namespace_len", len(ns), "err", err)
		}
		return
	}
	e.loads.Add(1)
	e.log.Debug("memory index built from the shared store", "memories", sp.ix().lex.Len(), "took", time.Since(t0))
	e.enforceBudget(ns)
	if snaps := e.dbSnaps(); snaps != nil && inserted {
		e.saveDBSnapshot(snaps, ns, sp)
	}
}

// It reports whether the vectors were inserted one by one (no snapshot
// was loaded), so that the caller saves one.
func (e *Engine) loadLocked(ns string, sp *space) (bool, error) {
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
			sp.cur.Store(&indexes{lex: old.lex, order: old.order, vec: idx})
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
	after := ""
	for {
		if e.ctx.Err() != nil {
			return false, errStopped
		}
		recs, next, err := e.st.Page(ns, after, e.cfg.PageSize, vectors)
		if err != nil {
			return false, err
		}
		for _, r := range recs {
			if vectors {
				e.applyRecord(sp, ix, r)
			} else {
				ix.lex.Add(r.Memory.ID, r.Memory.Text)
				ix.order.add(r.Memory.ID, r.Memory.Source, r.Memory.Time)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	sp.follow.applied = store.Cursor{Seq: from + 1} // after every change of from
	sp.follow.through.Store(from)
	return vectors, e.catchUpLocked(e.ctx, ns, sp, seq)
}

// catchUpLocked applies every change after sp's cursor, page by page, and
// records that everything up to target is applied: target was committed
// before the first page was read, so the drained feed holds it. sp.mu is
// held. A catch-up cut short keeps what it applied.
func (e *Engine) catchUpLocked(ctx context.Context, ns string, sp *space, target uint64) error {
	fs := sp.follow
	ix := sp.ix()
	applied := 0
	defer func() {
		if applied > 0 {
			e.caughtUp.Add(int64(applied))
			fs.bytes.Store(ix.bytes(e.dim))
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
				ix.lex.Delete(id)
				ix.order.delete(id)
				if ix.vec != nil {
					ix.vec.Delete(id)
				}
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
func (e *Engine) applyRecord(sp *space, ix *indexes, r store.Record) {
	m := r.Memory
	e.addLex(ix.lex, m)
	ix.order.add(m.ID, m.Source, m.Time)
	if ix.vec == nil {
		return
	}
	ix.vec.Delete(m.ID)
	if embed.Check(r.Vector, e.dim) == nil {
		if err := ix.vec.Add(m.ID, r.Vector); err != nil {
			sp.dirty.Store(true)
		}
	}
}

// bytes estimates ix's memory for Config.IndexMemory.
func (ix *indexes) bytes(dim int) int64 {
	const perOrder = 96   // source order entry: key, map entry
	const perVector = 320 // HNSW node: neighbour lists, map entries
	n := int64(ix.lex.Len())
	b := ix.lex.Bytes() + n*perOrder
	if ix.vec != nil {
		b += int64(ix.vec.Len()) * (int64(dim)*4 + perVector)
	}
	return b
}

// drop forgets sp if it is still ns's space: the next use builds anew.
func (e *Engine) drop(ns string, sp *space) {
	e.mu.Lock()
	if e.spaces[ns] == sp {
		delete(e.spaces, ns)
	}
	e.mu.Unlock()
}

// enforceBudget drops least recently used namespaces, never keep, while
// the estimated total exceeds Config.IndexMemory.
func (e *Engine) enforceBudget(keep string) {
	if e.cfg.IndexMemory <= 0 {
		return
	}
	type entry struct {
		ns    string
		sp    *space
		used  int64
		bytes int64
	}
	e.mu.RLock()
	var all []entry
	var total int64
	for ns, sp := range e.spaces {
		if sp.follow == nil {
			continue
		}
		b := sp.follow.bytes.Load()
		total += b
		all = append(all, entry{ns, sp, sp.follow.lastUse.Load(), b})
	}
	e.mu.RUnlock()
	if total <= e.cfg.IndexMemory {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return int(min(max(a.used-b.used, -1), 1)) })
	for _, en := range all {
		if total <= e.cfg.IndexMemory {
			break
		}
		if en.ns == keep {
			continue
		}
		select {
		case <-en.sp.follow.loaded:
		default:
			continue // still building: its first user is waiting for it
		}
		e.drop(en.ns, en.sp)
		e.evictions.Add(1)
		total -= en.bytes
	}
}

// startFollowing runs, until Close, the goroutines that keep the built
// namespaces caught up: one listening for the store's notifications, one
// polling every namespace's sequence, and one applying the changes they
// find, so that searches rarely have to wait.
func (e *Engine) startFollowing() {
	wake := make(chan string, 256)
	notify := func(ns string) {
		select {
		case wake <- ns:
		default: // full: the poll will find it
		}
	}
	e.bg.Add(3)
	go func() {
		defer e.bg.Done()
		backoff := 100 * time.Millisecond
		for e.ctx.Err() == nil {
			t0 := time.Now()
			err := e.feed.Listen(e.ctx, notify)
			if e.ctx.Err() != nil {
				return
			}
			if time.Since(t0) > 10*time.Second {
				backoff = 100 * time.Millisecond
			}
			e.log.Debug("shared store notifications lost; listening again", "err", err, "in", backoff)
			select {
			case <-e.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
	go func() {
		defer e.bg.Done()
		t := time.NewTicker(e.cfg.Poll)
		defer t.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
			}
			e.mu.RLock()
			names := make([]string, 0, len(e.spaces))
			for ns := range e.spaces {
				names = append(names, ns)
			}
			e.mu.RUnlock()
			if len(names) == 0 {
				continue
			}
			e.purgeTombstones()
			if snaps := e.dbSnaps(); snaps != nil && !e.savingDB.Load() {
				e.bg.Add(1) // inside a running background goroutine: Close waits for it too
				go func() {
					defer e.bg.Done()
					e.saveIdleDBSnapshots(snaps)
				}()
			}
			seqs, err := e.feed.Seqs(e.ctx, names)
			if err != nil {
				continue // the store is down; searches say so
			}
			for ns, seq := range seqs {
				if sp, _ := e.space(ns, false); sp != nil && sp.follow != nil && sp.follow.through.Load() < seq {
					notify(ns)
				}
			}
		}
	}()
	go func() {
		defer e.bg.Done()
		for {
			select {
			case <-e.stop:
				return
			case ns := <-wake:
				e.catchUpInBackground(ns)
			}
		}
	}()
}

// purgeEvery is how often a shared-store engine purges old tombstones.
const purgeEvery = time.Hour

// purgeTombstones removes, at most every purgeEvery, the store's
// tombstones older than Config.TombstoneRetention (see pgstore's
// purge.go): every replica does, which is harmless (each namespace's
// purge is one short transaction, and a second finds nothing).
func (e *Engine) purgeTombstones() {
	p, ok := e.st.(interface {
		PurgeTombstones(ctx context.Context, before time.Time) (int64, error)
	})
	if !ok || e.cfg.TombstoneRetention <= 0 {
		return
	}
	now := time.Now()
	if last := e.lastPurge.Load(); last != 0 && now.Sub(time.Unix(0, last)) < purgeEvery {
		return
	}
	e.lastPurge.Store(now.UnixNano())
	n, err := p.PurgeTombstones(e.ctx, now.Add(-e.cfg.TombstoneRetention))
	if err != nil && e.ctx.Err() == nil {
		e.log.Warn("purging deleted memories' tombstones from the shared store; the next hour retries", "purged", n, "err", err)
	} else if n > 0 {
		e.log.Info("purged deleted memories' tombstones from the shared store", "purged", n, "older_than", e.cfg.TombstoneRetention)
	}
}

// catchUpInBackground brings a built namespace up to the store's current
// sequence, unless a search is already doing it.
func (e *Engine) catchUpInBackground(ns string) {
	sp, _ := e.space(ns, false)
	if sp == nil || sp.follow == nil {
		return
	}
	select {
	case <-sp.follow.loaded:
	default:
		return
	}
	if sp.follow.loadErr != nil || !sp.mu.TryLock() {
		return
	}
	defer sp.mu.Unlock()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	target, err := e.feed.Seq(ctx, ns)
	if err != nil || sp.follow.through.Load() >= target {
		return
	}
	if err := e.catchUpLocked(ctx, ns, sp, target); err != nil && e.ctx.Err() == nil {
		e.log.Debug("background catch-up failed; the next search or poll retries", "err", err)
	}
	sp.mu.Unlock()
	e.enforceBudget(ns)
	sp.mu.Lock() // for the deferred Unlock
}

// FollowStats counts what a shared-store engine did since it started.
type FollowStats struct {
	// Loaded is how many namespaces were resident at the time of the
	// call, and Bytes their estimated index memory.
	Loaded int
	Bytes  int64
	// Builds counts namespace builds from the store, Evictions the
	// namespaces dropped for Config.IndexMemory, Changes the changes
	// applied from the change sequence, SnapshotLoads the builds whose
	// vector index came from the store's snapshot, SnapshotSaves the
	// snapshots this process saved there.
	Builds, Evictions, Changes, SnapshotLoads, SnapshotSaves int64
}

// Follow reports the shared-store follower's counters (zero for a store
// of this process alone).
func (e *Engine) Follow() FollowStats {
	st := FollowStats{Builds: e.loads.Load(), Evictions: e.evictions.Load(), Changes: e.caughtUp.Load(),
		SnapshotLoads: e.snapLoads.Load(), SnapshotSaves: e.snapSaves.Load()}
	e.mu.RLock()
	for _, sp := range e.spaces {
		if sp.follow != nil {
			st.Loaded++
			st.Bytes += sp.follow.bytes.Load()
		}
	}
	e.mu.RUnlock()
	return st
}

// Config returns the engine's configuration, defaults applied.
func (e *Engine) Config() Config { return e.cfg }

// Shared reports whether the engine's store is shared with other
// processes (its indexes follow the store's change sequence).
func (e *Engine) Shared() bool { return e.feed != nil }

// Ping checks that a shared store can be reached; nil for a store of this
// process alone.
func (e *Engine) Ping(ctx context.Context) error {
	if e.feed == nil {
		return nil
	}
	p, ok := e.st.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	if err := p.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}
