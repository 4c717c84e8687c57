package retrieval

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// A shared store may keep each namespace's vector index (snapfile.go's
// format) so that a replica building a namespace loads it instead of
// inserting every vector again: for 100k 1024-dimensional vectors a load
// is seconds, an insertion minutes. The snapshot is taken at a change
// sequence: the index holds every change up to it, and perhaps some
// after. A loader applies every change after it, and each such change
// carries its memory's latest state (or a tombstone), which replaces
// whatever the snapshot held for that memory; so the loaded index ends
// exact, whichever replica saved it and whenever.
//
// A replica saves a namespace's snapshot after building it vector by
// vector, and when its changes have been quiet for Config.Follow.SnapshotIdle
// with changes since its last snapshot; only namespaces with at least
// Config.Follow.SnapshotMinVectors vectors, and never one whose stored snapshot
// is as recent.

// dbSnaps returns the store's snapshot keeping, or nil when the engine
// keeps none (no vectors, or switched off).
func (e *follower) dbSnaps() store.Snapshots {
	if e.dim == 0 || !e.cfg.Follow.SharedSnapshots {
		return nil
	}
	return e.feed
}

// loadDBSnapshot returns ns's vector index from the store's snapshot and
// the change sequence it was taken at, or an error saying why not
// (wrapping store.ErrNotFound when there is none).
func (e *follower) loadDBSnapshot(snaps store.Snapshots, ns string) (savable, uint64, error) {
	var idx savable
	var at uint64
	err := snaps.Snapshot(e.ctx, ns, func(seq uint64, r io.Reader) error {
		x, _, err := decodeSnap(r, snapWant{ns: ns, dim: e.dim, index: e.snapIndex}, func(h snapHeader) error {
			if h.Seq != seq {
				return miss("corrupt", "header says sequence %d, the store %d", h.Seq, seq)
			}
			return nil
		})
		idx, at = x, seq
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if err := searchSettings(idx, e.snapIndex); err != nil {
		return nil, 0, err
	}
	return idx, at, nil
}

// saveDBSnapshot saves sp's vector index to the store if it has enough
// vectors and the store's snapshot is older. The index is encoded into
// memory under its read lock (searches go on; catch-ups wait for the
// encoding, which runs at memory speed), then uploaded without it.
func (e *follower) saveDBSnapshot(snaps store.Snapshots, ns string, sp *space) {
	if !e.savingDB.CompareAndSwap(false, true) {
		return // one at a time: the next idle check tries again
	}
	defer e.savingDB.Store(false)
	fs := sp.follow
	sp.mu.Lock()
	at, ix, dirty := fs.through.Load(), sp.ix(), sp.dirty.Load()
	sp.mu.Unlock()
	sv, ok := ix.Vec.(savable)
	if dirty || !ok || at == 0 || sv.Len() < e.cfg.Follow.SnapshotMinVectors {
		return
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Minute)
	defer cancel()
	if cur, err := snaps.SnapshotSeq(ctx, ns); err != nil || cur >= at {
		fs.snapSeq.Store(max(cur, fs.snapSeq.Load()))
		return
	}
	t0 := time.Now()
	var buf bytes.Buffer
	h := snapHeader{Namespace: ns, Seq: at, Dim: e.dim, Index: sv.Config(), Vectors: sv.Len(), Saved: t0.UTC()}
	if err := encodeSnap(&buf, h, sv); err != nil {
		e.log.Warn("memory vector index snapshot not encoded", "err", err)
		return
	}
	size := buf.Len()
	saved, err := snaps.PutSnapshot(ctx, ns, at, func(w io.Writer) error {
		_, err := buf.WriteTo(w)
		return err
	})
	if err != nil {
		if e.ctx.Err() == nil {
			e.log.Warn("memory vector index snapshot not saved to the shared store; a later idle period retries", "err", err)
		}
		return
	}
	fs.snapSeq.Store(at)
	if saved {
		e.snapSaves.Add(1)
		e.log.Debug("memory vector index snapshot saved to the shared store", "vectors", sv.Len(), "bytes", size, "seq", at, "took", time.Since(t0))
	}
}

// saveIdleDBSnapshots saves the snapshot of every resident namespace whose
// changes have been quiet for Config.Follow.SnapshotIdle since changes its stored
// snapshot lacks.
func (e *follower) saveIdleDBSnapshots(snaps store.Snapshots) {
	if e.cfg.Follow.SnapshotIdle <= 0 {
		return
	}
	now := time.Now().UnixNano()
	e.mu.RLock()
	var due []string
	for ns, sp := range e.spaces {
		fs := sp.follow
		if fs == nil || fs.through.Load() <= fs.snapSeq.Load() {
			continue
		}
		if last := fs.changedAt.Load(); last != 0 && now-last >= int64(e.cfg.Follow.SnapshotIdle) {
			due = append(due, ns)
		}
	}
	e.mu.RUnlock()
	for _, ns := range due {
		if sp, _ := e.space(ns, false); sp != nil && e.ctx.Err() == nil {
			select {
			case <-sp.follow.loaded:
				e.saveDBSnapshot(snaps, ns, sp)
			default:
			}
		}
	}
}

// errNoSnapshot reports whether err only says there is no snapshot.
func errNoSnapshot(err error) bool { return errors.Is(err, store.ErrNotFound) }
