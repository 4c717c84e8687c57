package retrieval

import (
	"context"
	"fmt"
	"slices"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Disagreement is one namespace whose indexes did not match the store.
type Disagreement struct {
	Namespace string
	// StoreMemories / IndexedMemories: memories in the store and in BM25.
	StoreMemories   int
	IndexedMemories int
	// StoreVectors counts usable stored vectors; IndexedVectors the vector
	// index's size.
	StoreVectors   int
	IndexedVectors int
	// Missing / Extra: IDs in the store but not in BM25, and the reverse
	// (first few only).
	Missing []string
	Extra   []string
	// MissingVectors: IDs with a usable stored vector that the vector
	// index lacks (first few only). With equal counts, none missing also
	// means none extra.
	MissingVectors []string
	// Dirty: an index update had failed after a durable write.
	Dirty bool
	// Repaired: the namespace's indexes were rebuilt from the store.
	Repaired bool
}

// CheckReport is the result of Check.
type CheckReport struct {
	Namespaces int
	Memories   int
	// OtherDim counts stored vectors of another dimension than the engine's
	// (written under a different embedding model); they are not indexed.
	OtherDim      int
	Disagreements []Disagreement
}

// maxListed bounds the IDs listed per disagreement.
const maxListed = 10

// Check compares every namespace's indexes with the store and, with
// repair, rebuilds each namespace that disagrees. It waits for the start-up
// build first. Writes to a namespace wait while it is checked.
func (e *Engine) Check(ctx context.Context, repair bool) (CheckReport, error) {
	return e.k.check(ctx, repair)
}

func (e *owner) check(ctx context.Context, repair bool) (CheckReport, error) {
	if err := e.Wait(ctx); err != nil {
		return CheckReport{}, fmt.Errorf("retrieval: check: start-up build: %w", err)
	}
	names, err := e.st.Namespaces()
	if err != nil {
		return CheckReport{}, fmt.Errorf("retrieval: check: %w", err)
	}
	e.mu.RLock()
	for ns := range e.spaces {
		if !slices.Contains(names, ns) {
			names = append(names, ns) // indexed but gone from the store
		}
	}
	e.mu.RUnlock()
	slices.Sort(names)
	rep := CheckReport{Namespaces: len(names), Disagreements: []Disagreement{}}
	for _, ns := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		d, n, other, err := e.checkSpace(ns, repair)
		if err != nil {
			return rep, err
		}
		rep.Memories += n
		rep.OtherDim += other
		if d != nil {
			rep.Disagreements = append(rep.Disagreements, *d)
		}
	}
	return rep, nil
}

// checkSpace compares one namespace under its write lock.
func (e *owner) checkSpace(ns string, repair bool) (*Disagreement, int, int, error) {
	sp, err := e.space(ns, true)
	if err != nil {
		return nil, 0, 0, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	d := Disagreement{Namespace: ns, Dirty: sp.dirty.Load()}
	ix := sp.ix()
	inStore := map[string]bool{}
	other := 0
	for pg, err := range store.Pages(e.st, ns, e.cfg.PageSize, e.dim > 0) {
		if err != nil {
			return nil, 0, 0, fmt.Errorf("retrieval: check %q: %w", ns, err)
		}
		for _, r := range pg.Records {
			id := r.Memory.ID
			inStore[id] = true
			if !ix.Lex.Has(id) && len(d.Missing) < maxListed {
				d.Missing = append(d.Missing, id)
			}
			if embed.Check(r.Vector, e.dim) == nil {
				d.StoreVectors++
				if !ix.Vec.Has(id) && len(d.MissingVectors) < maxListed {
					d.MissingVectors = append(d.MissingVectors, id)
				}
			} else if r.Vector != nil && len(r.Vector) != e.dim {
				other++
			}
		}
	}
	d.StoreMemories = len(inStore)
	d.IndexedMemories = ix.Lex.Len()
	for _, id := range ix.Lex.IDs() {
		if !inStore[id] && len(d.Extra) < maxListed {
			d.Extra = append(d.Extra, id)
		}
	}
	if ix.Vec != nil {
		d.IndexedVectors = ix.Vec.Len()
	}
	ok := !d.Dirty && len(d.Missing) == 0 && len(d.Extra) == 0 && len(d.MissingVectors) == 0 &&
		d.StoreMemories == d.IndexedMemories && d.StoreVectors == d.IndexedVectors
	if ok {
		return nil, d.StoreMemories, other, nil
	}
	if repair {
		if err := e.rebuildLocked(ns, sp); err != nil {
			return nil, 0, 0, err
		}
		d.Repaired = true
	}
	return &d, d.StoreMemories, other, nil
}

// rebuildLocked replaces sp's indexes by ones built from the store; sp.mu
// is held, so no write interleaves.
func (e *owner) rebuildLocked(ns string, sp *space) error {
	fresh, err := e.newIndexes()
	if err != nil {
		return err
	}
	for pg, err := range store.Pages(e.st, ns, e.cfg.PageSize, e.dim > 0) {
		if err != nil {
			return fmt.Errorf("retrieval: rebuild %q: %w", ns, err)
		}
		for _, r := range pg.Records {
			if err := fresh.Put(r.Memory, r.Vector); err != nil {
				return fmt.Errorf("retrieval: rebuild %q: vector of %q: %w", ns, r.Memory.ID, err)
			}
		}
	}
	// Readers that loaded the old pair finish on it; new ones see the
	// rebuilt pair.
	sp.cur.Store(fresh)
	sp.dirty.Store(false)
	sp.own.noteWrite() // a dirty index was not snapshotted: let the idle saver look
	return nil
}
