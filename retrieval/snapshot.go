package retrieval

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
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/store"
)

// snapshotsOn reports whether the engine loads and saves snapshots.
func (e *owner) snapshotsOn() bool {
	return e.cfg.Owner.SnapshotDir != "" && e.dim > 0
}

func (e *owner) snapPath(ns string) string {
	return filepath.Join(e.cfg.Owner.SnapshotDir, snapName(ns))
}

// vectorsFromSnapshot tries to make ns's vector index from its snapshot
// instead of the store, and reports whether it did. Either way it records
// the outcome for Stats; a refused snapshot is logged, never an error.
func (e *owner) vectorsFromSnapshot(ns string, sp *space) bool {
	if !e.snapshotsOn() {
		sp.own.info.Store(&vecInfo{source: "rebuild"})
		return false
	}
	t0 := time.Now()
	idx, h, err := readSnap(e.snapPath(ns), snapWant{ns: ns, gen: sp.own.startGen, dim: e.dim, index: e.snapIndex})
	if err == nil {
		err = e.adoptSnapshot(ns, sp, idx, h.Gen)
	}
	if err != nil {
		// Missing or stale is the normal first start, a small namespace,
		// or a crash: per namespace that is debug detail (the build logs a
		// summary). A changed model or index setting is worth a line;
		// damage a warning.
		level := slog.LevelWarn
		switch missKind(err) {
		case "missing", "stale":
			level = slog.LevelDebug
		case "dimension", "config":
			level = slog.LevelInfo
		}
		sp.own.info.Store(&vecInfo{source: "rebuild", miss: err.Error()})
		e.log.Log(e.ctx, level, "memory vector index snapshot not used; rebuilding from the store",
			"namespace", ns, "why", err.Error())
		return false
	}
	sp.own.info.Store(&vecInfo{source: "snapshot"})
	e.log.Debug("memory vector index loaded from snapshot", "namespace", ns, "vectors", idx.Len(),
		"generation", h.Gen.String(), "took", time.Since(t0).Round(time.Millisecond))
	return true
}

// missKind is the kind of a *missError ("" for other errors).
func missKind(err error) string {
	var m *missError
	if errors.As(err, &m) {
		return m.kind
	}
	return ""
}

// logVectorSources summarises where the vector indexes of names came
// from, once the vector phase is over.
func (e *owner) logVectorSources(names []string, start time.Time) {
	if !e.snapshotsOn() || len(names) == 0 {
		return
	}
	loaded, rebuilt := 0, map[string]int{}
	for _, ns := range names {
		sp, _ := e.space(ns, false)
		in := sp.own.info.Load()
		switch {
		case in == nil: // stopped before its turn
		case in.source == "snapshot":
			loaded++
		default:
			kind, _, _ := strings.Cut(in.miss, ":")
			rebuilt[kind]++
		}
	}
	e.log.Info("memory vector indexes built", "from_snapshot", loaded, "rebuilt", rebuilt, "took", time.Since(start).Round(time.Millisecond))
}

// adoptSnapshot makes idx, loaded at the namespace's start generation,
// its vector index. Writes made through the engine since New (touched)
// are not in the snapshot: under sp.mu, where the store and the live
// index agree on them, each is re-applied from the store.
func (e *owner) adoptSnapshot(ns string, sp *space, idx savable, gen store.VectorGen) error {
	if err := searchSettings(idx, e.snapIndex); err != nil {
		return err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ids := make([]string, 0, len(sp.own.touched))
	for id := range sp.own.touched {
		idx.Delete(id)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), e.cfg.PageSize)]
		ids = ids[len(chunk):]
		recs, err := e.st.GetMany(ns, chunk, true)
		if err != nil {
			return miss("replay", "re-reading %d memories written during the start: %v", len(chunk), err)
		}
		for _, r := range recs {
			if embed.Check(r.Vector, e.dim) == nil {
				if err := idx.Add(r.Memory.ID, r.Vector); err != nil {
					return miss("replay", "vector of %q: %v", r.Memory.ID, err)
				}
			}
		}
	}
	// Readers that loaded the old set finish on it; the lexical index and
	// the source order are the same objects in both.
	old := sp.ix()
	sp.cur.Store(old.WithVectors(idx))
	sp.own.snapGen = gen
	sp.vecReady.Store(true)
	return nil
}

// searchSettings gives a loaded index the engine's search-time settings
// (a snapshot keeps those it was saved with).
func searchSettings(idx savable, want hnsw.Config) error {
	if cur := idx.Config(); cur.EfSearch != want.EfSearch || cur.ScanContrast != want.ScanContrast {
		if err := idx.SetSearch(want.EfSearch, want.ScanContrast); err != nil {
			return miss("config", "search settings: %v", err)
		}
	}
	return nil
}

// saveSnapshots saves every namespace whose snapshot is not current (each
// an atomicfile.Write, which fsyncs the file and the directory) and
// removes the snapshots of namespaces that are gone. why is for the log.
func (e *owner) saveSnapshots(why string) error {
	if !e.snapshotsOn() {
		return nil
	}
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	dir := e.cfg.Owner.SnapshotDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("retrieval: snapshots: %w", err)
	}
	e.mu.RLock()
	names := make([]string, 0, len(e.spaces))
	for ns := range e.spaces {
		names = append(names, ns)
	}
	e.mu.RUnlock()
	slices.Sort(names)
	if !e.snapClean {
		e.snapClean = true
		e.removeLeftovers(names)
	}
	var errs []error
	saved := 0
	t0 := time.Now()
	for _, ns := range names {
		sp, _ := e.space(ns, false)
		ok, err := e.saveSnapshot(ns, sp)
		if err != nil {
			errs = append(errs, err)
			e.log.Warn("memory vector index snapshot not saved; the next start will rebuild it", "namespace", ns, "err", err)
		}
		if ok {
			saved++
		}
	}
	if saved > 0 { // each save fsynced dir after its rename (atomicfile.Write)
		e.log.Info("memory vector index snapshots saved", "when", why, "namespaces", saved, "took", time.Since(t0).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// saveSnapshot saves ns's snapshot unless it is current, and reports
// whether it wrote one.
//
// The generation is read under sp.mu, where every write through the
// engine has reached both the store and the index, so the index holds at
// least the vectors of that generation. The index is saved after the lock
// is released, so writes may add to it meanwhile; each of those moves the
// store's generation past the recorded one, so such a snapshot is only
// ever refused as stale, never loaded with extra vectors.
func (e *owner) saveSnapshot(ns string, sp *space) (bool, error) {
	sp.mu.Lock()
	if !sp.vecReady.Load() || sp.dirty.Load() {
		// Not built, or missing an update: not the store's vectors. An old
		// file stays valid exactly as long as its generation is current.
		sp.mu.Unlock()
		return false, nil
	}
	gen, err := e.st.VectorGen(ns)
	if err == nil && gen.IsZero() {
		gen, err = e.st.BumpVectorGen(ns) // give it one that later writes move
		if errors.Is(err, store.ErrNotFound) {
			sp.mu.Unlock()
			return false, e.removeSnapshot(ns) // the namespace is gone
		}
	}
	ix, known := sp.ix(), sp.own.snapGen
	sp.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	path := e.snapPath(ns)
	if gen == known {
		if _, err := os.Stat(path); err == nil {
			return false, nil
		}
	}
	sv, ok := ix.Vec.(savable)
	if !ok || ix.Vec.Len() < e.cfg.Owner.SnapshotMinVectors {
		return false, e.removeSnapshot(ns)
	}
	h := snapHeader{Namespace: ns, Gen: gen, Dim: e.dim, Index: sv.Config(), Vectors: sv.Len(), Saved: time.Now().UTC()}
	if err := writeSnap(e.cfg.Owner.SnapshotDir, h, sv); err != nil {
		return false, fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	sp.mu.Lock()
	sp.own.snapGen = gen
	sp.mu.Unlock()
	return true, nil
}

// removeSnapshot deletes ns's snapshot file, if any.
func (e *owner) removeSnapshot(ns string) error {
	if err := os.Remove(e.snapPath(ns)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("retrieval: snapshot of %q: %w", ns, err)
	}
	return nil
}

// removeLeftovers deletes, once per engine, the temporary files of saves
// cut short by a crash and the snapshots of namespaces that are not in
// the store (deleted while no engine ran). Snapshots of namespaces
// deleted through this engine are removed by saveSnapshot.
func (e *owner) removeLeftovers(names []string) {
	keep := make(map[string]bool, len(names))
	for _, ns := range names {
		keep[snapName(ns)] = true
	}
	ents, err := os.ReadDir(e.cfg.Owner.SnapshotDir)
	if err != nil {
		e.log.Warn("memory index snapshots: listing the directory", "err", err)
		return
	}
	for _, ent := range ents {
		name := ent.Name()
		tmp := strings.HasPrefix(name, snapTmpPrefix) && strings.HasSuffix(name, snapExt)
		if !tmp && (!isSnapName(name) || keep[name]) {
			continue
		}
		if err := os.Remove(filepath.Join(e.cfg.Owner.SnapshotDir, name)); err != nil {
			e.log.Warn("memory index snapshots: removing a leftover file", "file", name, "err", err)
		}
	}
}

// noteWrite records that a write changed sp, for snapshotWhenIdle.
func (o *ownState) noteWrite() { o.lastWrite.Store(time.Now().UnixNano()) }

// snapshotWhenIdle saves the snapshot of each namespace whose last write
// is at least SnapshotIdle old, until Close.
func (e *owner) snapshotWhenIdle() {
	defer e.bg.Done()
	idle := e.cfg.Owner.SnapshotIdle
	tick := time.NewTicker(max(min(idle/4, 15*time.Second), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case now := <-tick.C:
			if e.anyIdle(now, idle) {
				if err := e.saveSnapshots("idle"); err != nil {
					e.log.Warn("memory index snapshots after writes went quiet", "err", err)
				}
			}
		}
	}
}

// anyIdle reports whether some namespace changed and then went quiet for
// idle, and clears their marks (a failed save is retried at Close, not
// in a loop).
func (e *owner) anyIdle(now time.Time, idle time.Duration) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	found := false
	for _, sp := range e.spaces {
		t := sp.own.lastWrite.Load()
		if t != 0 && now.Sub(time.Unix(0, t)) >= idle && sp.own.lastWrite.CompareAndSwap(t, 0) {
			found = true
		}
	}
	return found
}
