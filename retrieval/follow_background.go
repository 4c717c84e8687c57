package retrieval

import (
	"context"
	"time"
)

// startFollowing runs, until Close, the goroutines that keep the built
// namespaces caught up: one listening for the store's notifications, one
// polling every namespace's sequence, and one applying the changes they
// find, so that searches rarely have to wait.
func (e *follower) startFollowing() {
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
		t := time.NewTicker(e.cfg.Follow.Poll)
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
				if sp, _ := e.space(ns, false); sp != nil && sp.follow.through.Load() < seq {
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
// tombstones older than Config.Follow.TombstoneRetention (see pgstore's
// purge.go): every replica does, which is harmless (each namespace's
// purge is one short transaction, and a second finds nothing).
func (e *follower) purgeTombstones() {
	if e.cfg.Follow.TombstoneRetention <= 0 {
		return
	}
	now := time.Now()
	if last := e.lastPurge.Load(); last != 0 && now.Sub(time.Unix(0, last)) < purgeEvery {
		return
	}
	e.lastPurge.Store(now.UnixNano())
	n, err := e.feed.PurgeTombstones(e.ctx, now.Add(-e.cfg.Follow.TombstoneRetention))
	if err != nil && e.ctx.Err() == nil {
		e.log.Warn("purging deleted memories' tombstones from the shared store; the next hour retries", "purged", n, "err", err)
	} else if n > 0 {
		e.log.Info("purged deleted memories' tombstones from the shared store", "purged", n, "older_than", e.cfg.Follow.TombstoneRetention)
	}
}

// catchUpInBackground brings a built namespace up to the store's current
// sequence, unless a search is already doing it.
func (e *follower) catchUpInBackground(ns string) {
	sp, _ := e.space(ns, false)
	if sp == nil {
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
