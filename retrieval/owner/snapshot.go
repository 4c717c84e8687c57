package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/snap"
	"github.com/rerankd/rerankd/retrieval/store"
)

// snapshotsOn reports whether the owner loads and saves snapshots.
func (o *Owner) snapshotsOn() bool {
	return o.conf.SnapshotDir != "" && o.Dim() > 0
}

// SnapshotsAt implements keep.Keeper: the snapshot directory, or "off".
func (o *Owner) SnapshotsAt() string {
	if !o.snapshotsOn() {
		return "off"
	}
	return o.conf.SnapshotDir
}

func (o *Owner) snapPath(ns string) string {
	return filepath.Join(o.conf.SnapshotDir, snap.Name(ns))
}

// vectorsFromSnapshot tries to make ns's vector index from its snapshot
// instead of the store, and reports whether it did. Either way it records
// the outcome for Stats; a refused snapshot is logged, never an error.
func (o *Owner) vectorsFromSnapshot(ns string, sp *space) bool {
	if !o.snapshotsOn() {
		sp.info.Store(&vecInfo{source: "rebuild"})
		return false
	}
	t0 := time.Now()
	idx, h, err := snap.Read(o.snapPath(ns), snap.Want{Namespace: ns, Gen: sp.startGen, Dim: o.Dim(), Index: o.VectorIndex()})
	if err == nil {
		err = o.adoptSnapshot(ns, sp, idx, h.Gen)
	}
	if err != nil {
		// Missing or stale is the normal first start, a small namespace,
		// or a crash: per namespace that is debug detail (the build logs a
		// summary). A changed model or index setting is worth a line;
		// damage a warning.
		level := slog.LevelWarn
		switch snap.Kind(err) {
		case "missing", "stale":
			level = slog.LevelDebug
		case "dimension", "config":
			level = slog.LevelInfo
		}
		sp.info.Store(&vecInfo{source: "rebuild", miss: err.Error()})
		o.Logger().Log(o.Context(), level, "memory vector index snapshot not used; rebuilding from the store",
			"namespace", ns, "why", err.Error())
		return false
	}
	sp.info.Store(&vecInfo{source: "snapshot"})
	o.Logger().Debug("memory vector index loaded from snapshot", "namespace", ns, "vectors", idx.Len(),
		"generation", h.Gen.String(), "took", time.Since(t0).Round(time.Millisecond))
	return true
}

// logVectorSources summarises where the vector indexes of names came
// from, once the vector phase is over.
func (o *Owner) logVectorSources(names []string, start time.Time) {
	if !o.snapshotsOn() || len(names) == 0 {
		return
	}
	loaded, rebuilt := 0, map[string]int{}
	for _, ns := range names {
		sp, _ := o.space(ns, false)
		in := sp.info.Load()
		switch {
		case in == nil: // stopped before its turn
		case in.source == "snapshot":
			loaded++
		default:
			kind, _, _ := strings.Cut(in.miss, ":")
			rebuilt[kind]++
		}
	}
	o.Logger().Info("memory vector indexes built", "from_snapshot", loaded, "rebuilt", rebuilt, "took", time.Since(start).Round(time.Millisecond))
}

// adoptSnapshot makes idx, loaded at the namespace's start generation,
// its vector index. Writes made through the owner since New (touched)
// are not in the snapshot: under sp.Mu, where the store and the live
// index agree on them, each is re-applied from the store.
func (o *Owner) adoptSnapshot(ns string, sp *space, idx snap.Savable, gen store.VectorGen) error {
	if err := snap.SearchSettings(idx, o.VectorIndex()); err != nil {
		return err
	}
	sp.Mu.Lock()
	defer sp.Mu.Unlock()
	ids := make([]string, 0, len(sp.touched))
	for id := range sp.touched {
		idx.Delete(id)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), o.PageSize())]
		ids = ids[len(chunk):]
		recs, err := o.Store().GetMany(ns, chunk, true)
		if err != nil {
			return snap.Miss("replay", "re-reading %d memories written during the start: %v", len(chunk), err)
		}
		for _, r := range recs {
			if embed.Check(r.Vector, o.Dim()) == nil {
				if err := idx.Add(r.Memory.ID, r.Vector); err != nil {
					return snap.Miss("replay", "vector of %q: %v", r.Memory.ID, err)
				}
			}
		}
	}
	// Readers that loaded the old set finish on it; the lexical index and
	// the source order are the same objects in both.
	old := sp.Indexes()
	sp.Swap(old.WithVectors(idx))
	sp.snapGen = gen
	sp.Vec.Store(true)
	return nil
}

// saveSnapshots saves every namespace whose snapshot is not current (each
// an atomicfile.Write, which fsyncs the file and the directory) and
// removes the snapshots of namespaces that are gone. why is for the log.
func (o *Owner) saveSnapshots(why string) error {
	if !o.snapshotsOn() {
		return nil
	}
	o.snapMu.Lock()
	defer o.snapMu.Unlock()
	dir := o.conf.SnapshotDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("retrieval: snapshots: %w", err)
	}
	names := o.spaces.Names()
	if !o.snapClean {
		o.snapClean = true
		o.removeLeftovers(names)
	}
	var errs []error
	saved := 0
	t0 := time.Now()
	for _, ns := range names {
		sp, _ := o.space(ns, false)
		ok, err := o.saveSnapshot(ns, sp)
		if err != nil {
			errs = append(errs, err)
			o.Logger().Warn("memory vector index snapshot not saved; the next start will rebuild it", "namespace", ns, "err", err)
		}
		if ok {
			saved++
		}
	}
	if saved > 0 { // each save fsynced dir after its rename (atomicfile.Write)
		o.Logger().Info("memory vector index snapshots saved", "when", why, "namespaces", saved, "took", time.Since(t0).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// saveSnapshot saves ns's snapshot unless it is current, and reports
// whether it wrote one.
//
// The generation is read under sp.Mu, where every write through the
// owner has reached both the store and the index, so the index holds at
// least the vectors of that generation. The index is saved after the lock
// is released, so writes may add to it meanwhile; each of those moves the
// store's generation past the recorded one, so such a snapshot is only
// ever refused as stale, never loaded with extra vectors.
func (o *Owner) saveSnapshot(ns string, sp *space) (bool, error) {
	sp.Mu.Lock()
	if !sp.Vec.Load() || sp.Dirty.Load() {
		// Not built, or missing an update: not the store's vectors. An old
		// file stays valid exactly as long as its generation is current.
		sp.Mu.Unlock()
		return false, nil
	}
	gen, err := o.Store().VectorGen(ns)
	if err == nil && gen.IsZero() {
		gen, err = o.Store().BumpVectorGen(ns) // give it one that later writes move
		if errors.Is(err, store.ErrNotFound) {
			sp.Mu.Unlock()
			return false, o.removeSnapshot(ns) // the namespace is gone
		}
	}
	ix, known := sp.Indexes(), sp.snapGen
	sp.Mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	path := o.snapPath(ns)
	if gen == known {
		if _, err := os.Stat(path); err == nil {
			return false, nil
		}
	}
	sv, ok := ix.Vec.(snap.Savable)
	if !ok || ix.Vec.Len() < o.conf.SnapshotMinVectors {
		return false, o.removeSnapshot(ns)
	}
	h := snap.Header{Namespace: ns, Gen: gen, Dim: o.Dim(), Index: sv.Config(), Vectors: sv.Len(), Saved: time.Now().UTC()}
	if err := snap.Write(o.conf.SnapshotDir, h, sv); err != nil {
		return false, fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	sp.Mu.Lock()
	sp.snapGen = gen
	sp.Mu.Unlock()
	return true, nil
}

// removeSnapshot deletes ns's snapshot file, if any.
func (o *Owner) removeSnapshot(ns string) error {
	if err := os.Remove(o.snapPath(ns)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	return nil
}

// removeLeftovers deletes, once per owner, the temporary files of saves
// cut short by a crash and the snapshots of namespaces that are not in
// the store (deleted while no owner ran). Snapshots of namespaces
// deleted through this owner are removed by saveSnapshot.
func (o *Owner) removeLeftovers(names []string) {
	keep := make(map[string]bool, len(names))
	for _, ns := range names {
		keep[snap.Name(ns)] = true
	}
	ents, err := os.ReadDir(o.conf.SnapshotDir)
	if err != nil {
		o.Logger().Warn("memory index snapshots: listing the directory", "err", err)
		return
	}
	for _, ent := range ents {
		name := ent.Name()
		tmp := strings.HasPrefix(name, snap.TmpPrefix) && strings.HasSuffix(name, snap.Ext)
		if !tmp && (!snap.IsName(name) || keep[name]) {
			continue
		}
		if err := os.Remove(filepath.Join(o.conf.SnapshotDir, name)); err != nil {
			o.Logger().Warn("memory index snapshots: removing a leftover file", "file", name, "err", err)
		}
	}
}

// noteWrite records that a write changed sp, for snapshotWhenIdle.
func (sp *space) noteWrite() { sp.lastWrite.Store(time.Now().UnixNano()) }

// snapshotWhenIdle saves the snapshot of each namespace whose last write
// is at least SnapshotIdle old, until Close.
func (o *Owner) snapshotWhenIdle() {
	idle := o.conf.SnapshotIdle
	tick := time.NewTicker(max(min(idle/4, 15*time.Second), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-o.Stopping():
			return
		case now := <-tick.C:
			if o.anyIdle(now, idle) {
				if err := o.saveSnapshots("idle"); err != nil {
					o.Logger().Warn("memory index snapshots after writes went quiet", "err", err)
				}
			}
		}
	}
}

// anyIdle reports whether some namespace changed and then went quiet for
// idle, and clears their marks (a failed save is retried at Close, not
// in a loop).
func (o *Owner) anyIdle(now time.Time, idle time.Duration) bool {
	found := false
	o.spaces.Each(func(_ string, sp *space) {
		t := sp.lastWrite.Load()
		if t != 0 && now.Sub(time.Unix(0, t)) >= idle && sp.lastWrite.CompareAndSwap(t, 0) {
			found = true
		}
	})
	return found
}
