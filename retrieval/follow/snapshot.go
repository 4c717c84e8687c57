package follow

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/rerankd/rerankd/retrieval/snap"
	"github.com/rerankd/rerankd/retrieval/store"
)

// A shared store may keep each namespace's vector index (retrieval/snap's
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

// SnapshotsAt implements keep.Keeper: "in the database", or "off".
func (f *Follower) SnapshotsAt() string {
	if f.dbSnaps() == nil {
		return "off"
	}
	return "in the database"
}

// dbSnaps returns the store's snapshot keeping, or nil when the follower
// keeps none (no vectors, or switched off).
func (f *Follower) dbSnaps() store.Snapshots {
	if f.Dim() == 0 || !f.conf.SharedSnapshots {
		return nil
	}
	return f.feed
}

// loadDBSnapshot returns ns's vector index from the store's snapshot and
// the change sequence it was taken at, or an error saying why not
// (wrapping store.ErrNotFound when there is none).
func (f *Follower) loadDBSnapshot(snaps store.Snapshots, ns string) (snap.Savable, uint64, error) {
	var idx snap.Savable
	var at uint64
	err := snaps.Snapshot(f.Context(), ns, func(seq uint64, r io.Reader) error {
		x, _, err := snap.Decode(r, snap.Want{Namespace: ns, Dim: f.Dim(), Index: f.VectorIndex()}, func(h snap.Header) error {
			if h.Seq != seq {
				return snap.Miss("corrupt", "header says sequence %d, the store %d", h.Seq, seq)
			}
			return nil
		})
		idx, at = x, seq
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if err := snap.SearchSettings(idx, f.VectorIndex()); err != nil {
		return nil, 0, err
	}
	return idx, at, nil
}

// saveDBSnapshot saves sp's vector index to the store if it has enough
// vectors and the store's snapshot is older. The index is encoded into
// memory under its read lock (searches go on; catch-ups wait for the
// encoding, which runs at memory speed), then uploaded without it.
func (f *Follower) saveDBSnapshot(snaps store.Snapshots, ns string, sp *space) {
	if !f.savingDB.CompareAndSwap(false, true) {
		return // one at a time: the next idle check tries again
	}
	defer f.savingDB.Store(false)
	sp.Mu.Lock()
	at, ix, dirty := sp.through.Load(), sp.Indexes(), sp.Dirty.Load()
	sp.Mu.Unlock()
	sv, ok := ix.Vec.(snap.Savable)
	if dirty || !ok || at == 0 || sv.Len() < f.conf.SnapshotMinVectors {
		return
	}
	ctx, cancel := context.WithTimeout(f.Context(), 10*time.Minute)
	defer cancel()
	if cur, err := snaps.SnapshotSeq(ctx, ns); err != nil || cur >= at {
		sp.snapSeq.Store(max(cur, sp.snapSeq.Load()))
		return
	}
	t0 := time.Now()
	var buf bytes.Buffer
	h := snap.Header{Namespace: ns, Seq: at, Dim: f.Dim(), Index: sv.Config(), Vectors: sv.Len(), Saved: t0.UTC()}
	if err := snap.Encode(&buf, h, sv); err != nil {
		f.Logger().Warn("memory vector index snapshot not encoded", "err", err)
		return
	}
	size := buf.Len()
	saved, err := snaps.PutSnapshot(ctx, ns, at, func(w io.Writer) error {
		_, err := buf.WriteTo(w)
		return err
	})
	if err != nil {
		if f.Context().Err() == nil {
			f.Logger().Warn("memory vector index snapshot not saved to the shared store; a later idle period retries", "err", err)
		}
		return
	}
	sp.snapSeq.Store(at)
	if saved {
		f.snapSaves.Add(1)
		f.Logger().Debug("memory vector index snapshot saved to the shared store", "vectors", sv.Len(), "bytes", size, "seq", at, "took", time.Since(t0))
	}
}

// saveIdleDBSnapshots saves the snapshot of every resident namespace whose
// changes have been quiet for Config.Follow.SnapshotIdle since changes its stored
// snapshot lacks.
func (f *Follower) saveIdleDBSnapshots(snaps store.Snapshots) {
	if f.conf.SnapshotIdle <= 0 {
		return
	}
	now := time.Now().UnixNano()
	var due []string
	f.spaces.Each(func(ns string, sp *space) {
		if sp.through.Load() <= sp.snapSeq.Load() {
			return
		}
		if last := sp.changedAt.Load(); last != 0 && now-last >= int64(f.conf.SnapshotIdle) {
			due = append(due, ns)
		}
	})
	for _, ns := range due {
		if sp := f.space(ns); sp != nil && f.Context().Err() == nil {
			select {
			case <-sp.loaded:
				f.saveDBSnapshot(snaps, ns, sp)
			default:
			}
		}
	}
}

// errNoSnapshot reports whether err only says there is no snapshot.
func errNoSnapshot(err error) bool { return errors.Is(err, store.ErrNotFound) }
