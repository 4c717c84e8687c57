package owner

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Start rebuilds the indexes of every namespace that was in the store at
// New from the store, in the background: first BM25 for all namespaces,
// then the vector indexes (slower; loaded from a snapshot instead where a
// current one exists), so lexical search is ready early. After the build
// it saves snapshots, back-fills missing vectors and keeps snapshots
// fresh, until Close. After Close, the build ends at once with an error.
func (o *Owner) Start() {
	if o.Closed() {
		o.Built(keep.ErrStopped)
		close(o.afterBuild)
		close(o.backfilled)
		return
	}
	o.Go(func() {
		defer close(o.backfilled)
		afterBuild := sync.OnceFunc(func() { close(o.afterBuild) })
		defer afterBuild()
		o.Built(o.build())
		if errors.Is(o.BuildErr(), keep.ErrStopped) {
			return
		}
		if err := o.saveSnapshots("build"); err != nil {
			o.Logger().Warn("memory index snapshots not saved after the build; the next start may rebuild", "err", err)
		}
		afterBuild()
		if o.conf.SnapshotIdle > 0 && o.snapshotsOn() {
			o.Go(o.snapshotWhenIdle)
		}
		// A long back-fill's vectors are worth a snapshot at once, not
		// only when SnapshotIdle (which may be off) next finds them quiet.
		if o.backfill() > 0 && o.Context().Err() == nil {
			if err := o.saveSnapshots("backfill"); err != nil {
				o.Logger().Warn("memory index snapshots not saved after the back-fill", "err", err)
			}
		}
	})
}

// build runs both phases over the namespaces known at New.
func (o *Owner) build() error {
	names := o.spaces.Names()

	total := 0
	counts := make(map[string]int, len(names))
	for _, ns := range names {
		n, err := o.Store().Count(ns)
		if err != nil {
			return fmt.Errorf("retrieval: build: %w", err)
		}
		total += n
		counts[ns] = n
	}
	var errs []error
	for _, phase := range []string{"bm25", "vector"} {
		if phase == "vector" && o.Dim() == 0 {
			break
		}
		if phase == "vector" {
			defer o.logVectorSources(names, time.Now()) // evaluated now: the phase's start
		}
		done := 0
		for _, ns := range names {
			sp, _ := o.space(ns, false)
			if phase == "vector" && sp.atStart {
				if o.vectorsFromSnapshot(ns, sp) {
					done += counts[ns]
					o.Progress(phase, done, total)
					continue
				}
			}
			n, err := o.buildSpace(ns, sp, phase, func(k int) {
				o.Progress(phase, done+k, total)
			})
			done += n
			if errors.Is(err, keep.ErrStopped) {
				return err
			}
			if err != nil {
				// A corrupt record must not keep every other namespace
				// unsearchable: record it, keep going, report at the end.
				errs = append(errs, err)
			}
		}
		o.Progress(phase, done, total)
	}
	for _, ns := range names {
		if sp, _ := o.space(ns, false); sp != nil {
			sp.Mu.Lock()
			sp.touched = nil
			sp.Mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// buildSpace fills one index of sp from the store, page by page, and marks
// it ready. Each page is applied under sp.Mu, skipping IDs written live
// since the build began (their index entry is already newer). It returns
// the number of memories read.
func (o *Owner) buildSpace(ns string, sp *space, phase string, progress func(int)) (int, error) {
	read := 0
	defer func() {
		// Even a failed build marks the index ready: it holds every record
		// that could be read, and scanning forever would be worse.
		if phase == "bm25" {
			sp.Lex.Store(true)
		} else {
			sp.Vec.Store(true)
		}
	}()
	stopped := func() bool {
		select {
		case <-o.Stopping():
			// Incomplete: never to be snapshotted (nor trusted by Check).
			sp.Dirty.Store(true)
			return true
		default:
			return false
		}
	}
	if stopped() {
		return read, keep.ErrStopped
	}
	for pg, err := range store.Pages(o.Store(), ns, o.PageSize(), phase == "vector") {
		if err != nil {
			sp.Dirty.Store(true)
			return read, fmt.Errorf("retrieval: build %s index of %q after %q: %w", phase, ns, pg.After, err)
		}
		if stopped() {
			return read, keep.ErrStopped
		}
		sp.Mu.Lock()
		ix := sp.Indexes()
		for _, r := range pg.Records {
			if _, live := sp.touched[r.Memory.ID]; live {
				continue
			}
			if phase == "bm25" {
				ix.PutText(r.Memory)
			} else if err := ix.PutVector(r.Memory.ID, r.Vector); err != nil {
				// Stored vectors of another dimension (the embedding
				// model changed) are left out by PutVector rather than
				// failing the build; Check reports them.
				sp.Dirty.Store(true)
			}
		}
		sp.Mu.Unlock()
		read += len(pg.Records)
		progress(read)
	}
	return read, nil
}
