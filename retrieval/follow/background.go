package follow

import (
	"context"
	"time"
)

// startFollowing runs, until Close, the goroutines that keep the built
// namespaces caught up: one listening for the store's notifications, one
// polling every namespace's sequence, and one applying the changes they
// find, so that searches rarely have to wait.
func (e *Follower) startFollowing() {
	wake := make(chan string, 256)
	notify := func(ns string) {
		select {
		case wake <- ns:
		default: // full: the poll will find it
		}
	}
	e.BG.Add(3)
	go func() {
		defer e.BG.Done()
		backoff := 100 * time.Millisecond
		for e.Ctx.Err() == nil {
			t0 := time.Now()
			err := e.feed.Listen(e.Ctx, notify)
			if e.Ctx.Err() != nil {
				return
			}
			if time.Since(t0) > 10*time.Second {
				backoff = 100 * time.Millisecond
			}
			e.Log.Debug("shared store notifications lost; listening again", "err", err, "in", backoff)
			select {
			case <-e.Stopping():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
	go func() {
		defer e.BG.Done()
		t := time.NewTicker(e.conf.Poll)
		defer t.Stop()
		for {
			select {
			case <-e.Stopping():
				return
			case <-t.C:
			}
			names := e.spaces.Names()
			if len(names) == 0 {
				continue
			}
			e.purgeTombstones()
			if snaps := e.dbSnaps(); snaps != nil && !e.savingDB.Load() {
				e.BG.Add(1) // inside a running background goroutine: Close waits for it too
				go func() {
					defer e.BG.Done()
					e.saveIdleDBSnapshots(snaps)
				}()
			}
			seqs, err := e.feed.Seqs(e.Ctx, names)
			if err != nil {
				continue // the store is down; searches say so
			}
			for ns, seq := range seqs {
				if sp := e.space(ns); sp != nil && sp.through.Load() < seq {
					notify(ns)
				}
			}
		}
	}()
	go func() {
		defer e.BG.Done()
		for {
			select {
			case <-e.Stopping():
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
// tombstones older than Config.Follow.TombstoneRetention (see pgstore's
// purge.go): every replica does, which is harmless (each namespace's
// purge is one short transaction, and a second finds nothing).
func (e *Follower) purgeTombstones() {
	if e.conf.TombstoneRetention <= 0 {
		return
	}
	now := time.Now()
	if last := e.lastPurge.Load(); last != 0 && now.Sub(time.Unix(0, last)) < purgeEvery {
		return
	}
	e.lastPurge.Store(now.UnixNano())
	n, err := e.feed.PurgeTombstones(e.Ctx, now.Add(-e.conf.TombstoneRetention))
	if err != nil && e.Ctx.Err() == nil {
		e.Log.Warn("purging deleted memories' tombstones from the shared store; the next hour retries", "purged", n, "err", err)
	} else if n > 0 {
		e.Log.Info("purged deleted memories' tombstones from the shared store", "purged", n, "older_than", e.conf.TombstoneRetention)
	}
}

// catchUpInBackground brings a built namespace up to the store's current
// sequence, unless a search is already doing it.
func (e *Follower) catchUpInBackground(ns string) {
	sp := e.space(ns)
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
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	target, err := e.feed.Seq(ctx, ns)
	if err != nil || sp.through.Load() >= target {
		return
	}
	if err := e.catchUpLocked(ctx, ns, sp, target); err != nil && e.Ctx.Err() == nil {
		e.Log.Debug("background catch-up failed; the next search or poll retries", "err", err)
	}
	sp.Mu.Unlock()
	e.enforceBudget(ns)
	sp.Mu.Lock() // for the deferred Unlock
}
