package follow

import (
	"context"
	"time"
)

// startFollowing runs, until Close, the goroutines that keep the built
// namespaces caught up: one listening for the store's notifications, one
// polling every namespace's sequence, and one applying the changes they
// find, so that searches rarely have to wait.
func (f *Follower) startFollowing() {
	wake := make(chan string, 256)
	notify := func(ns string) {
		select {
		case wake <- ns:
		default: // full: the poll will find it
		}
	}
	f.Go(func() {
		backoff := 100 * time.Millisecond
		for f.Context().Err() == nil {
			t0 := time.Now()
			err := f.feed.Listen(f.Context(), notify)
			if f.Context().Err() != nil {
				return
			}
			if time.Since(t0) > 10*time.Second {
				backoff = 100 * time.Millisecond
			}
			f.Logger().Debug("shared store notifications lost; listening again", "err", err, "in", backoff)
			select {
			case <-f.Stopping():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	})
	f.Go(func() {
		t := time.NewTicker(f.conf.Poll)
		defer t.Stop()
		for {
			select {
			case <-f.Stopping():
				return
			case <-t.C:
			}
			names := f.spaces.Names()
			if len(names) == 0 {
				continue
			}
			f.purgeTombstones()
			if snaps := f.dbSnaps(); snaps != nil && !f.savingDB.Load() {
				// Inside a running background goroutine: Close waits for it too.
				f.Go(func() { f.saveIdleDBSnapshots(snaps) })
			}
			seqs, err := f.feed.Seqs(f.Context(), names)
			if err != nil {
				continue // the store is down; searches say so
			}
			for ns, seq := range seqs {
				if sp := f.space(ns); sp != nil && sp.through.Load() < seq {
					notify(ns)
				}
			}
		}
	})
	f.Go(func() {
		for {
			select {
			case <-f.Stopping():
				return
			case ns := <-wake:
				f.catchUpInBackground(ns)
			}
		}
	})
}

// purgeEvery is how often a follower purges old tombstones.
const purgeEvery = time.Hour

// purgeTombstones removes, at most every purgeEvery, the store's
// tombstones older than Config.Follow.TombstoneRetention (see pgstore's
// purge.go): every replica does, which is harmless (each namespace's
// purge is one short transaction, and a second finds nothing).
func (f *Follower) purgeTombstones() {
	if f.conf.TombstoneRetention <= 0 {
		return
	}
	now := time.Now()
	if last := f.lastPurge.Load(); last != 0 && now.Sub(time.Unix(0, last)) < purgeEvery {
		return
	}
	f.lastPurge.Store(now.UnixNano())
	n, err := f.feed.PurgeTombstones(f.Context(), now.Add(-f.conf.TombstoneRetention))
	if err != nil && f.Context().Err() == nil {
		f.Logger().Warn("purging deleted memories' tombstones from the shared store; the next hour retries", "purged", n, "err", err)
	} else if n > 0 {
		f.Logger().Info("purged deleted memories' tombstones from the shared store", "purged", n, "older_than", f.conf.TombstoneRetention)
	}
}

// catchUpInBackground brings a built namespace up to the store's current
// sequence, unless a search is already doing it.
func (f *Follower) catchUpInBackground(ns string) {
	sp := f.space(ns)
	if sp == nil {
		return
	}
	select {
	case <-sp.loaded:
	default:
		return
	}
	if sp.loadErr != nil || !sp.Mu.TryLock() {
		return
	}
	defer sp.Mu.Unlock()
	ctx, cancel := context.WithTimeout(f.Context(), 30*time.Second)
	defer cancel()
	target, err := f.feed.Seq(ctx, ns)
	if err != nil || sp.through.Load() >= target {
		return
	}
	if err := f.catchUpLocked(ctx, ns, sp, target); err != nil && f.Context().Err() == nil {
		f.Logger().Debug("background catch-up failed; the next search or poll retries", "err", err)
	}
	sp.Mu.Unlock()
	f.enforceBudget(ns)
	sp.Mu.Lock() // for the deferred Unlock
}
