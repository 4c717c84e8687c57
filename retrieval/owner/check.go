package owner

import (
	"context"
	"fmt"
	"slices"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/store"
)

// maxListed bounds the IDs listed per disagreement.
const maxListed = 10

// Check compares every namespace's indexes with the store and, with
// repair, rebuilds each namespace that disagrees. It waits for the start-up
// build first. Writes to a namespace wait while it is checked.
func (o *Owner) Check(ctx context.Context, repair bool) (keep.CheckReport, error) {
	if err := o.Wait(ctx); err != nil {
		return keep.CheckReport{}, fmt.Errorf("retrieval: check: start-up build: %w", err)
	}
	names, err := o.Store().Namespaces()
	if err != nil {
		return keep.CheckReport{}, fmt.Errorf("retrieval: check: %w", err)
	}
	for _, ns := range o.spaces.Names() {
		if !slices.Contains(names, ns) {
			names = append(names, ns) // indexed but gone from the store
		}
	}
	slices.Sort(names)
	rep := keep.CheckReport{Namespaces: len(names), Disagreements: []keep.Disagreement{}}
	for _, ns := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		d, n, other, err := o.checkSpace(ns, repair)
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
func (o *Owner) checkSpace(ns string, repair bool) (*keep.Disagreement, int, int, error) {
	sp, err := o.space(ns, true)
	if err != nil {
		return nil, 0, 0, err
	}
	sp.Mu.Lock()
	defer sp.Mu.Unlock()
	d := keep.Disagreement{Namespace: ns, Dirty: sp.Dirty.Load()}
	ix := sp.Indexes()
	inStore := map[string]bool{}
	other := 0
	for pg, err := range store.Pages(o.Store(), ns, o.PageSize(), o.Dim() > 0) {
		if err != nil {
			return nil, 0, 0, fmt.Errorf("retrieval: check %q: %w", ns, err)
		}
		for _, r := range pg.Records {
			id := r.Memory.ID
			inStore[id] = true
			if !ix.Lex.Has(id) && len(d.Missing) < maxListed {
				d.Missing = append(d.Missing, id)
			}
			if embed.Check(r.Vector, o.Dim()) == nil {
				d.StoreVectors++
				if !ix.Vec.Has(id) && len(d.MissingVectors) < maxListed {
					d.MissingVectors = append(d.MissingVectors, id)
				}
			} else if r.Vector != nil && len(r.Vector) != o.Dim() {
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
		if err := o.rebuildLocked(ns, sp); err != nil {
			return nil, 0, 0, err
		}
		d.Repaired = true
	}
	return &d, d.StoreMemories, other, nil
}

// rebuildLocked replaces sp's indexes by ones built from the store; sp.Mu
// is held, so no write interleaves.
func (o *Owner) rebuildLocked(ns string, sp *space) error {
	fresh, err := o.NewIndexes()
	if err != nil {
		return err
	}
	for pg, err := range store.Pages(o.Store(), ns, o.PageSize(), o.Dim() > 0) {
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
	sp.Swap(fresh)
	sp.Dirty.Store(false)
	sp.noteWrite() // a dirty index was not snapshotted: let the idle saver look
	return nil
}
