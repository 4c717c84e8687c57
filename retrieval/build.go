package retrieval

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// errStopped ends a build cut short by Close.
var errStopped = errors.New("retrieval: build stopped")

// Start rebuilds the indexes of every namespace that was in the store at
// New from the store, in the background: first BM25 for all namespaces,
// then the vector indexes (slower; loaded from a snapshot instead where a
// current one exists), so lexical search is ready early. After the build
// it saves snapshots, back-fills missing vectors and keeps snapshots
// fresh, until Close. Start returns at once; Wait waits for the build.
// Calling Start twice panics (programmer error); after Close, the build
// ends at once with an error.
func (e *Engine) Start() {
	if !e.building.CompareAndSwap(false, true) {
		panic("retrieval: Engine.Start called twice")
	}
	e.k.start()
}

// start runs the start-up build, then the snapshots, the back-fill and the
// idle snapshot saver, in the background.
func (e *owner) start() {
	if e.closed.Load() {
		e.buildErr = errStopped
		close(e.built)
		close(e.afterBuild)
		close(e.backfilled)
		return
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		defer close(e.backfilled)
		afterBuild := sync.OnceFunc(func() { close(e.afterBuild) })
		defer afterBuild()
		e.buildErr = e.build()
		close(e.built)
		if errors.Is(e.buildErr, errStopped) {
			return
		}
		if err := e.saveSnapshots("build"); err != nil {
			e.log.Warn("memory index snapshots not saved after the build; the next start may rebuild", "err", err)
		}
		afterBuild()
		if e.cfg.Owner.SnapshotIdle > 0 && e.snapshotsOn() {
			e.bg.Add(1)
			go e.snapshotWhenIdle()
		}
		// A long back-fill's vectors are worth a snapshot at once, not
		// only when SnapshotIdle (which may be off) next finds them quiet.
		if e.backfill() > 0 && e.ctx.Err() == nil {
			if err := e.saveSnapshots("backfill"); err != nil {
				e.log.Warn("memory index snapshots not saved after the back-fill", "err", err)
			}
		}
	}()
}

// build runs both phases over the namespaces known at New.
func (e *owner) build() error {
	e.mu.RLock()
	names := make([]string, 0, len(e.spaces))
	for ns := range e.spaces {
		names = append(names, ns)
	}
	e.mu.RUnlock()
	slices.Sort(names)

	total := 0
	counts := make(map[string]int, len(names))
	for _, ns := range names {
		n, err := e.st.Count(ns)
		if err != nil {
			return fmt.Errorf("retrieval: build: %w", err)
		}
		total += n
		counts[ns] = n
	}
	var errs []error
	for _, phase := range []string{"bm25", "vector"} {
		if phase == "vector" && e.dim == 0 {
			break
		}
		if phase == "vector" {
			defer e.logVectorSources(names, time.Now()) // evaluated now: the phase's start
		}
		done := 0
		for _, ns := range names {
			sp, _ := e.space(ns, false)
			if phase == "vector" && sp.own.atStart {
				if e.vectorsFromSnapshot(ns, sp) {
					done += counts[ns]
					if e.cfg.Progress != nil {
						e.cfg.Progress(phase, done, total)
					}
					continue
				}
			}
			n, err := e.buildSpace(ns, sp, phase, func(k int) {
				if e.cfg.Progress != nil {
					e.cfg.Progress(phase, done+k, total)
				}
			})
			done += n
			if errors.Is(err, errStopped) {
				return err
			}
			if err != nil {
				// A corrupt record must not keep every other namespace
				// unsearchable: record it, keep going, report at the end.
				errs = append(errs, err)
			}
		}
		if e.cfg.Progress != nil {
			e.cfg.Progress(phase, done, total)
		}
	}
	for _, ns := range names {
		if sp, _ := e.space(ns, false); sp != nil {
			sp.mu.Lock()
			sp.own.touched = nil
			sp.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// buildSpace fills one index of sp from the store, page by page, and marks
// it ready. Each page is applied under sp.mu, skipping IDs written live
// since the build began (their index entry is already newer). It returns
// the number of memories read.
func (e *owner) buildSpace(ns string, sp *space, phase string, progress func(int)) (int, error) {
	read := 0
	defer func() {
		// Even a failed build marks the index ready: it holds every record
		// that could be read, and scanning forever would be worse.
		if phase == "bm25" {
			sp.lexReady.Store(true)
		} else {
			sp.vecReady.Store(true)
		}
	}()
	stopped := func() bool {
		select {
		case <-e.stop:
			// Incomplete: never to be snapshotted (nor trusted by Check).
			sp.dirty.Store(true)
			return true
		default:
			return false
		}
	}
	if stopped() {
		return read, errStopped
	}
	for pg, err := range store.Pages(e.st, ns, e.cfg.PageSize, phase == "vector") {
		if err != nil {
			sp.dirty.Store(true)
			return read, fmt.Errorf("retrieval: build %s index of %q after %q: %w", phase, ns, pg.After, err)
		}
		if stopped() {
			return read, errStopped
		}
		sp.mu.Lock()
		ix := sp.ix()
		for _, r := range pg.Records {
			if _, live := sp.own.touched[r.Memory.ID]; live {
				continue
			}
			if phase == "bm25" {
				ix.PutText(r.Memory)
			} else if err := ix.PutVector(r.Memory.ID, r.Vector); err != nil {
				// Stored vectors of another dimension (the embedding
				// model changed) are left out by PutVector rather than
				// failing the build; Check reports them.
				sp.dirty.Store(true)
			}
		}
		sp.mu.Unlock()
		read += len(pg.Records)
		progress(read)
	}
	return read, nil
}
