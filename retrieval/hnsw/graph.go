package hnsw

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"
)

// HNSW is an approximate Index: a hierarchical navigable small world graph
// (Malkov & Yashunin). See the package documentation for the algorithm
// and for how deletes are handled.
type HNSW struct {
	cfg Config
	mL  float64 // level multiplier, 1/ln(M)

	mu       sync.RWMutex
	rng      *rand.Rand
	vecs     []float32    // node i's unit vector is vecs[i*Dim:(i+1)*Dim]
	ids      []string     // node → id (kept for dead nodes too)
	alive    []bool       // node → not tombstoned
	links    [][][]uint32 // node → layer → neighbour nodes
	byID     map[string]uint32
	entry    uint32 // entry point, valid when len(ids) > 0
	maxLevel int
	dead     int // tombstoned nodes still in the graph

	visited sync.Pool    // *bitset, one per concurrent search
	scratch sync.Pool    // *[]float32 for exact scans
	scans   atomic.Int64 // searches answered by an exact scan
}

var _ Index = (*HNSW)(nil)

// New returns an empty HNSW index, or an error if cfg is invalid.
func New(cfg Config) (*HNSW, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hnsw.New: %w", err)
	}
	h := &HNSW{cfg: cfg, mL: 1 / math.Log(float64(cfg.M))}
	h.resetLocked()
	return h, nil
}

// resetLocked empties the graph.
func (h *HNSW) resetLocked() {
	h.rng = rand.New(rand.NewSource(h.cfg.Seed)) //nolint:gosec // level generation, not security
	h.vecs, h.ids, h.alive, h.links = nil, nil, nil, nil
	h.byID = make(map[string]uint32)
	h.entry, h.maxLevel, h.dead = 0, 0, 0
}

// Config returns the index's parameters.
func (h *HNSW) Config() Config {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.cfg
}

// SetSearch changes the search-time parameters, EfSearch and
// ScanContrast (validated as in Config), without rebuilding: they do not
// change the graph, so they can be tuned on a live index.
func (h *HNSW) SetSearch(efSearch int, scanContrast float64) error {
	cfg := h.Config()
	cfg.EfSearch, cfg.ScanContrast = efSearch, scanContrast
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("hnsw.SetSearch: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cfg.EfSearch, h.cfg.ScanContrast = efSearch, scanContrast
	return nil
}

// Dim returns the vector dimension.
func (h *HNSW) Dim() int { return h.cfg.Dim }

// Len returns the number of live vectors.
func (h *HNSW) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.byID)
}

// Has reports whether id has a live vector in the index.
func (h *HNSW) Has(id string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.byID[id]
	return ok
}

func (h *HNSW) vec(n uint32) []float32 {
	d := h.cfg.Dim
	return h.vecs[int(n)*d : (int(n)+1)*d]
}

// dist is the cosine distance between unit vectors, 1 - dot, in float32
// (SIMD); scores returned to callers are recomputed exactly with dot.
func (h *HNSW) dist(q []float32, n uint32) float32 {
	return 1 - vek32.Dot(q, h.vec(n))
}

// Add inserts vec under id, replacing any vector with the same id.
func (h *HNSW) Add(id string, vec []float32) error {
	v, err := normalize(vec, h.cfg.Dim)
	if err != nil {
		return fmt.Errorf("hnsw add %q: %w", id, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(id)
	h.insertLocked(id, v)
	h.maybeRebuildLocked()
	return nil
}

// Delete removes id and reports whether it was present.
func (h *HNSW) Delete(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := h.forgetLocked(id)
	h.maybeRebuildLocked()
	return ok
}

// forgetLocked tombstones id's node, if any. The node stays in the graph
// so that searches can still route through it.
func (h *HNSW) forgetLocked(id string) bool {
	n, ok := h.byID[id]
	if !ok {
		return false
	}
	delete(h.byID, id)
	h.alive[n] = false
	h.dead++
	return true
}

// maybeRebuildLocked rebuilds the graph from the live vectors once
// tombstones outnumber them (and are more than a few), so searches never
// wade through mostly dead nodes. Amortised, each Add or Delete pays for
// O(1) re-insertions.
func (h *HNSW) maybeRebuildLocked() {
	live := len(h.byID)
	if live == 0 {
		if len(h.ids) > 0 {
			h.resetLocked()
		}
		return
	}
	if h.dead <= live || h.dead < 64 {
		return
	}
	vecs, ids, alive := h.vecs, h.ids, h.alive
	h.resetLocked()
	d := h.cfg.Dim
	for n, ok := range alive { // node order is insertion order: deterministic
		if ok {
			h.insertLocked(ids[n], vecs[n*d:(n+1)*d])
		}
	}
}

// randomLevel draws a level with P(level >= l) = M^-l.
func (h *HNSW) randomLevel() int {
	u := 1 - h.rng.Float64() // (0, 1]
	return int(-math.Log(u) * h.mL)
}

// maxLinks is Mmax: M on the upper layers, 2*M on layer 0.
func (h *HNSW) maxLinks(layer int) int {
	if layer == 0 {
		return 2 * h.cfg.M
	}
	return h.cfg.M
}

// insertLocked adds a new live node for id with unit vector v
// (Algorithm 1).
func (h *HNSW) insertLocked(id string, v []float32) {
	n := uint32(len(h.ids))
	level := h.randomLevel()
	h.vecs = append(h.vecs, v...)
	h.ids = append(h.ids, id)
	h.alive = append(h.alive, true)
	ls := make([][]uint32, level+1)
	for l := range ls {
		ls[l] = make([]uint32, 0, h.maxLinks(l)+1)
	}
	h.links = append(h.links, ls)
	h.byID[id] = n
	if n == 0 {
		h.entry, h.maxLevel = n, level
		return
	}

	vis := h.getVisited()
	defer h.putVisited(vis)
	ep := candidate{node: h.entry, dist: h.dist(v, h.entry)}
	for l := h.maxLevel; l > level; l-- {
		ep = h.greedy(v, ep, l)
	}
	eps := []candidate{ep}
	for l := min(level, h.maxLevel); l >= 0; l-- {
		w := h.searchLayer(v, eps, h.cfg.EfConstruction, l, vis)
		neigh := h.selectNeighbours(w, h.cfg.M)
		for _, c := range neigh {
			h.links[n][l] = append(h.links[n][l], c.node)
		}
		for _, c := range neigh {
			h.link(c.node, n, c.dist, l)
		}
		eps = w
	}
	if level > h.maxLevel {
		h.entry, h.maxLevel = n, level
	}
}

// link adds the edge from → to on layer l (d is their distance),
// shrinking from's neighbour list with the heuristic if it overflows.
func (h *HNSW) link(from, to uint32, d float32, l int) {
	list := append(h.links[from][l], to)
	limit := h.maxLinks(l)
	if len(list) <= limit {
		h.links[from][l] = list
		return
	}
	fv := h.vec(from)
	cands := make([]candidate, len(list))
	for i, x := range list {
		if x == to {
			cands[i] = candidate{node: x, dist: d}
		} else {
			cands[i] = candidate{node: x, dist: h.dist(fv, x)}
		}
	}
	slices.SortFunc(cands, candCmp)
	kept := h.selectNeighbours(cands, limit)
	list = list[:0]
	for _, c := range kept {
		list = append(list, c.node)
	}
	h.links[from][l] = list
}

// selectNeighbours picks up to m of cands (sorted by distance to the base,
// ascending) with the diversity heuristic (Algorithm 4): a candidate is
// kept only if it is closer to the base than to every neighbour already
// kept, so links spread over directions instead of piling into one
// cluster. If fewer than m pass, the closest rejected ones fill up the
// list (keepPrunedConnections), which keeps sparse regions connected.
func (h *HNSW) selectNeighbours(cands []candidate, m int) []candidate {
	if len(cands) <= m {
		return cands
	}
	kept := make([]candidate, 0, m)
	var pruned []candidate
	for _, c := range cands {
		if len(kept) >= m {
			break
		}
		cv := h.vec(c.node)
		good := true
		for _, r := range kept {
			if h.dist(cv, r.node) < c.dist {
				good = false
				break
			}
		}
		if good {
			kept = append(kept, c)
		} else {
			pruned = append(pruned, c)
		}
	}
	for _, c := range pruned {
		if len(kept) >= m {
			break
		}
		kept = append(kept, c)
	}
	return kept
}

// greedy walks layer l from ep to a local minimum of the distance to q
// (search with ef = 1).
func (h *HNSW) greedy(q []float32, ep candidate, l int) candidate {
	for changed := true; changed; {
		changed = false
		for _, x := range h.links[ep.node][l] {
			if d := h.dist(q, x); d < ep.dist {
				ep, changed = candidate{node: x, dist: d}, true
			}
		}
	}
	return ep
}

// searchLayer is the ef-bounded beam search of layer l (Algorithm 2). It
// returns up to ef nodes, dead ones included, sorted by distance
// ascending. vis is cleared before it returns.
func (h *HNSW) searchLayer(q []float32, eps []candidate, ef, l int, vis *bitset) []candidate {
	var cand, res candHeap // cand: min-heap; res: max-heap of the best ef
	touched := make([]uint32, 0, ef*4)
	for _, e := range eps {
		if vis.testAndSet(e.node) {
			continue
		}
		touched = append(touched, e.node)
		cand.push(e, false)
		res.push(e, true)
		if len(res) > ef {
			res.pop(true)
		}
	}
	for len(cand) > 0 {
		c := cand.pop(false)
		if c.dist > res[0].dist && len(res) >= ef {
			break
		}
		for _, x := range h.links[c.node][l] {
			if vis.testAndSet(x) {
				continue
			}
			touched = append(touched, x)
			d := h.dist(q, x)
			if len(res) < ef || d < res[0].dist {
				cand.push(candidate{node: x, dist: d}, false)
				res.push(candidate{node: x, dist: d}, true)
				if len(res) > ef {
					res.pop(true)
				}
			}
		}
	}
	for _, x := range touched {
		vis.clear(x)
	}
	out := []candidate(res)
	slices.SortFunc(out, candCmp)
	return out
}

// Search returns up to k approximate nearest vectors by cosine similarity.
func (h *HNSW) Search(vec []float32, k int) ([]Hit, error) {
	q, err := normalize(vec, h.cfg.Dim)
	if err != nil {
		return nil, fmt.Errorf("hnsw search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	live := len(h.byID)
	if live == 0 {
		return nil, nil
	}
	want := min(k, live)
	total := len(h.ids)
	ep := candidate{node: h.entry, dist: h.dist(q, h.entry)}
	for l := h.maxLevel; l > 0; l-- {
		ep = h.greedy(q, ep, l)
	}
	vis := h.getVisited()
	defer h.putVisited(vis)
	// Ask for enough nodes that, at the current tombstone ratio, about
	// want of them are live; widen if that falls short.
	ef := max(h.cfg.EfSearch, k, want+want*h.dead/live+8)
	var hits []Hit
	for {
		ef = min(ef, total)
		w := h.searchLayer(q, []candidate{ep}, ef, 0, vis)
		hits = hits[:0]
		for _, c := range w {
			if h.alive[c.node] {
				hits = append(hits, Hit{ID: h.ids[c.node], Score: dot(q, h.vec(c.node))})
			}
		}
		if len(hits) >= want || ef >= total {
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
		return scanTopK(q, h.vecs, h.ids, h.alive, k, &h.scratch), nil
	}
	return hits, nil
}

// contrastSample is how many nodes lowContrast measures the typical
// distance on: enough for a mean within a few percent, cheap next to the
// graph search (~30 dot products against its thousands).
const contrastSample = 32

// lowContrast reports whether the graph search's best hit is barely closer
// than the typical node, so the hits cannot be trusted and Search should
// scan exactly instead.
//
// Why: how well any graph (or tree, or hash) index can find neighbours is
// governed by the relative contrast, the nearest distance over the typical
// one. (The best hit, not the k-th: with k = 100, the k-th hit of a query
// with 20 relevant memories is a typical node on any data, while the best
// hit tells whether the query has any neighbourhood to navigate to.) Real embeddings have a low intrinsic dimension, and a
// query's neighbours are far closer than the rest (cosine ~0.6 vs ~0.1:
// distance ratio ~0.4); HNSW reaches them in a few hundred distance
// computations. For unstructured data such as uniform random 1024-d
// vectors, the nearest of 100k is at cosine ~0.14 and the rest at
// 0 ± 0.03 (ratio ~0.86): no route through the graph leads to them, and
// recall@10 0.95 needs a beam that visits most of the graph, slower than
// a scan (see the package documentation). Measuring the ratio costs
// contrastSample dot products; when it is above Config.ScanContrast the
// answer is recomputed by an exact scan, which in that regime is both
// exact and about as fast as a beam wide enough to be accurate.
func (h *HNSW) lowContrast(q []float32, hits []Hit) bool {
	if h.cfg.ScanContrast <= 0 || len(hits) == 0 {
		return false
	}
	total := len(h.ids)
	step := max(1, total/contrastSample)
	var sum float64
	var n int
	for i := 0; i < total && n < contrastSample; i += step {
		if h.alive[i] {
			sum += 1 - float64(vek32.Dot(q, h.vec(uint32(i))))
			n++
		}
	}
	if n == 0 {
		return false
	}
	return 1-hits[0].Score > h.cfg.ScanContrast*sum/float64(n)
}

// Scans returns how many searches were answered by an exact scan because
// their hits had low contrast (see Config.ScanContrast).
func (h *HNSW) Scans() int64 { return h.scans.Load() }

func (h *HNSW) getVisited() *bitset {
	n := len(h.ids)
	if b, ok := h.visited.Get().(*bitset); ok && len(*b)*64 >= n {
		return b
	}
	b := make(bitset, (n+63)/64+16)
	return &b
}

func (h *HNSW) putVisited(b *bitset) { h.visited.Put(b) }

// bitset marks visited nodes; searchLayer clears what it set.
type bitset []uint64

func (b bitset) testAndSet(n uint32) bool {
	w, m := n/64, uint64(1)<<(n%64)
	if b[w]&m != 0 {
		return true
	}
	b[w] |= m
	return false
}

func (b bitset) clear(n uint32) { b[n/64] &^= uint64(1) << (n % 64) }

// candidate is a node and its distance to the query or base node.
type candidate struct {
	dist float32
	node uint32
}

func candCmp(a, b candidate) int {
	switch {
	case a.dist < b.dist:
		return -1
	case a.dist > b.dist:
		return 1
	}
	return int(a.node) - int(b.node)
}

// candHeap is a binary heap of candidates: the root is the closest when
// max is false, the farthest when max is true.
type candHeap []candidate

func (h candHeap) less(i, j int, isMax bool) bool {
	if isMax {
		return h[i].dist > h[j].dist
	}
	return h[i].dist < h[j].dist
}

func (h *candHeap) push(c candidate, isMax bool) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p, isMax) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *candHeap) pop(isMax bool) candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m, isMax) {
			m = l
		}
		if r < len(s) && s.less(r, m, isMax) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
