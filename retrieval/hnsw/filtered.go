package hnsw

import (
	"container/heap"
	"fmt"
	"slices"
)

// Filtered search. A memory search with a filter asks the vector index for
// the k nearest of the memories the filter allows, not for the k nearest
// of all (which might hold none that match). Two ways, as Qdrant and
// weaviate do: an exact scan of the allowed vectors when they are few
// (SearchIDs), and the graph search keeping only allowed nodes in its
// result set while it walks through every node (SearchFiltered) when they
// are many. The caller picks by the allowed set's size.

// SearchIDs returns the exact k nearest of the vectors of ids (ids
// without a vector are skipped), by Score descending then ID.
func (h *HNSW) SearchIDs(vec []float32, k int, ids []string) ([]Hit, error) {
	q, err := normalize(vec, h.cfg.Dim)
	if err != nil {
		return nil, fmt.Errorf("hnsw search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return topOf(q, k, ids, func(id string) []float32 {
		if n, ok := h.byID[id]; ok && h.alive[n] {
			return h.vec(n)
		}
		return nil
	}), nil
}

// SearchIDs is the exact k nearest of the vectors of ids.
func (f *Flat) SearchIDs(vec []float32, k int, ids []string) ([]Hit, error) {
	q, err := normalize(vec, f.dim)
	if err != nil {
		return nil, fmt.Errorf("flat search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return topOf(q, k, ids, func(id string) []float32 {
		if i, ok := f.pos[id]; ok {
			return f.vecs[i*f.dim : (i+1)*f.dim]
		}
		return nil
	}), nil
}

// SearchFiltered is the exact top k of the vectors whose id allow accepts.
func (f *Flat) SearchFiltered(vec []float32, k int, allow func(string) bool) ([]Hit, error) {
	q, err := normalize(vec, f.dim)
	if err != nil {
		return nil, fmt.Errorf("flat search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	alive := make([]bool, len(f.ids))
	found := false
	for i, id := range f.ids {
		alive[i] = allow(id)
		found = found || alive[i]
	}
	if !found {
		return nil, nil
	}
	return scanTopK(q, f.vecs, f.ids, alive, k, &f.scores), nil
}

// topOf scores the vectors of ids exactly and keeps the k best.
func topOf(q []float32, k int, ids []string, vecOf func(string) []float32) []Hit {
	hq := make(worst, 0, k+1)
	for _, id := range ids {
		v := vecOf(id)
		if v == nil {
			continue
		}
		hit := Hit{ID: id, Score: dot(q, v)}
		if len(hq) < k {
			heap.Push(&hq, hit)
		} else if hitLess(hit, hq[0]) {
			hq[0] = hit
			heap.Fix(&hq, 0)
		}
	}
	out := []Hit(hq)
	slices.SortFunc(out, hitCmp)
	return out
}

// SearchFiltered returns up to k approximate nearest vectors among those
// whose id allow accepts: the beam walks every live node but only allowed
// ones enter the result set, widened until k are found or the graph is
// exhausted. For a small allowed set SearchIDs is faster and exact.
func (h *HNSW) SearchFiltered(vec []float32, k int, allow func(string) bool) ([]Hit, error) {
	q, err := normalize(vec, h.cfg.Dim)
	if err != nil {
		return nil, fmt.Errorf("hnsw search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(h.byID) == 0 {
		return nil, nil
	}
	ok := func(n uint32) bool { return h.alive[n] && allow(h.ids[n]) }
	ep := candidate{node: h.entry, dist: h.dist(q, h.entry)}
	for l := h.maxLevel; l > 0; l-- {
		ep = h.greedy(q, ep, l)
	}
	vis := h.getVisited()
	defer h.putVisited(vis)
	total := len(h.ids)
	ef := max(h.cfg.EfSearch, k)
	var hits []Hit
	for {
		ef = min(ef, total)
		hits = h.searchLayerAllowed(q, ep, ef, vis, ok)
		if len(hits) >= k || ef >= total {
			break
		}
		ef *= 2
	}
	slices.SortFunc(hits, hitCmp)
	if len(hits) > k {
		hits = hits[:k]
	}
	if h.lowContrast(q, hits) {
		h.scans.Add(1)
		alive := make([]bool, total)
		for n := range alive {
			alive[n] = ok(uint32(n))
		}
		return scanTopK(q, h.vecs, h.ids, alive, k, &h.scratch), nil
	}
	return hits, nil
}

// searchLayerAllowed is searchLayer on layer 0 whose result set (the best
// ef) holds only nodes ok accepts; every node still guides the walk.
func (h *HNSW) searchLayerAllowed(q []float32, ep candidate, ef int, vis *bitset, ok func(uint32) bool) []Hit {
	var cand, res candHeap
	touched := make([]uint32, 0, ef*4)
	vis.testAndSet(ep.node)
	touched = append(touched, ep.node)
	cand.push(ep, false)
	if ok(ep.node) {
		res.push(ep, true)
	}
	for len(cand) > 0 {
		c := cand.pop(false)
		if len(res) >= ef && c.dist > res[0].dist {
			break
		}
		for _, x := range h.links[c.node][0] {
			if vis.testAndSet(x) {
				continue
			}
			touched = append(touched, x)
			d := h.dist(q, x)
			if len(res) < ef || d < res[0].dist {
				cand.push(candidate{node: x, dist: d}, false)
				if ok(x) {
					res.push(candidate{node: x, dist: d}, true)
					if len(res) > ef {
						res.pop(true)
					}
				}
			}
		}
	}
	for _, x := range touched {
		vis.clear(x)
	}
	hits := make([]Hit, 0, len(res))
	for _, c := range res {
		hits = append(hits, Hit{ID: h.ids[c.node], Score: dot(q, h.vec(c.node))})
	}
	return hits
}
