package hnsw

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"

	chnsw "github.com/coder/hnsw"
	"github.com/viterin/vek/vek32"
)

// unitDotName is the name under which unitDot is registered with
// github.com/coder/hnsw: its Export writes the distance function's name
// and Import looks it up, so the function must be registered.
const unitDotName = "rerankd-unit-dot"

func init() { chnsw.RegisterDistanceFunc(unitDotName, unitDot) }

// unitDot is the cosine distance of unit vectors. coder/hnsw's own
// CosineDistance recomputes both norms on every call; ours are already 1.
func unitDot(a, b []float32) float32 { return 1 - vek32.Dot(a, b) }

// Coder is an Index over github.com/coder/hnsw v0.6.1, kept so that the
// maintained library can be compared with (and swapped for) our HNSW: set
// Config.Impl to ImplCoder and build with NewIndex. The package
// documentation has the measurements; in short, its recall is far below
// ours at every setting, which is why it is not the default.
//
// The wrapper works around the library's known defects instead of
// calling the code that has them:
//
//   - Graph.Delete can re-link the node it deletes (its neighbours
//     "replenish" from lists that still hold it), after which Add and
//     Search dereference a missing node (coder/hnsw#13), and a graph
//     emptied by deletes panics on the next Add (coder/hnsw#10). So the
//     wrapper never calls Delete: deletes and replaces are tombstones,
//     graph keys are node numbers that are never reused, and the graph is
//     rebuilt from the live vectors once tombstones outnumber them, as in
//     HNSW.
//   - Graph.Search keeps only k results and stops at the first expansion
//     that does not improve the best distance, so its k doubles as the
//     beam width: the wrapper asks for max(EfSearch, k) results and keeps
//     the best k.
//   - The library has one EfSearch for both building and searching
//     (it bounds the candidate queue); the wrapper sets it to
//     max(EfConstruction, EfSearch) for the graph's lifetime, because
//     changing it per call would race with concurrent searches.
//
// Vectors are L2-normalised before they reach the library, and scores are
// recomputed exactly (float64 dot), as in HNSW and Flat.
type Coder struct {
	cfg Config

	mu    sync.RWMutex
	g     *chnsw.Graph[uint32]
	ids   []string // node → id (kept for dead nodes too)
	alive []bool   // node → not tombstoned
	byID  map[string]uint32
	dead  int
}

var _ Index = (*Coder)(nil)

// NewCoder returns an empty Coder index, or an error if cfg is invalid.
// cfg.Impl is ignored.
func NewCoder(cfg Config) (*Coder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hnsw.NewCoder: %w", err)
	}
	c := &Coder{cfg: cfg}
	c.resetLocked()
	return c, nil
}

func (c *Coder) newGraph() *chnsw.Graph[uint32] {
	g := chnsw.NewGraph[uint32]()
	g.M = c.cfg.M
	// coder's Ml is the probability of promotion to the next layer; the
	// paper's level multiplier 1/ln(M) gives P = 1/M.
	g.Ml = 1 / float64(c.cfg.M)
	g.EfSearch = max(c.cfg.EfConstruction, c.cfg.EfSearch)
	g.Distance = unitDot
	g.Rng = rand.New(rand.NewSource(c.cfg.Seed)) //nolint:gosec // level generation, not security
	return g
}

func (c *Coder) resetLocked() {
	c.g = c.newGraph()
	c.ids, c.alive = nil, nil
	c.byID = make(map[string]uint32)
	c.dead = 0
}

// Config returns the index's parameters.
func (c *Coder) Config() Config {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cfg
}

// SetSearch changes EfSearch on a live index (see HNSW.SetSearch);
// scanContrast must be valid but is unused (Coder never scans).
func (c *Coder) SetSearch(efSearch int, scanContrast float64) error {
	cfg := c.Config()
	cfg.EfSearch, cfg.ScanContrast = efSearch, scanContrast
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("hnsw.Coder.SetSearch: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.EfSearch, c.cfg.ScanContrast = efSearch, scanContrast
	c.g.EfSearch = max(c.cfg.EfConstruction, efSearch)
	return nil
}

// Dim returns the vector dimension.
func (c *Coder) Dim() int { return c.cfg.Dim }

// Len returns the number of live vectors.
func (c *Coder) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byID)
}

// Has reports whether id has a live vector in the index.
func (c *Coder) Has(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.byID[id]
	return ok
}

// Add inserts vec under id, replacing any vector with the same id.
func (c *Coder) Add(id string, vec []float32) error {
	v, err := normalize(vec, c.cfg.Dim)
	if err != nil {
		return fmt.Errorf("hnsw coder add %q: %w", id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(id)
	c.insertLocked(id, v)
	c.maybeRebuildLocked()
	return nil
}

// Delete removes id and reports whether it was present.
func (c *Coder) Delete(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := c.forgetLocked(id)
	c.maybeRebuildLocked()
	return ok
}

func (c *Coder) insertLocked(id string, v []float32) {
	n := uint32(len(c.ids))
	c.ids = append(c.ids, id)
	c.alive = append(c.alive, true)
	c.byID[id] = n
	c.g.Add(chnsw.MakeNode(n, v))
}

func (c *Coder) forgetLocked(id string) bool {
	n, ok := c.byID[id]
	if !ok {
		return false
	}
	delete(c.byID, id)
	c.alive[n] = false
	c.dead++
	return true
}

// maybeRebuildLocked has the same policy as HNSW's: rebuild from the live
// vectors, in insertion order, once tombstones outnumber them.
func (c *Coder) maybeRebuildLocked() {
	live := len(c.byID)
	if live == 0 {
		if len(c.ids) > 0 {
			c.resetLocked()
		}
		return
	}
	if c.dead <= live || c.dead < 64 {
		return
	}
	old, ids, alive := c.g, c.ids, c.alive
	c.resetLocked()
	for n, ok := range alive {
		if !ok {
			continue
		}
		v, found := old.Lookup(uint32(n))
		if !found {
			panic(fmt.Sprintf("hnsw coder: live node %d missing from the graph", n))
		}
		c.insertLocked(ids[n], v)
	}
}

// Search returns up to k approximate nearest vectors by cosine similarity.
func (c *Coder) Search(vec []float32, k int) ([]Hit, error) {
	q, err := normalize(vec, c.cfg.Dim)
	if err != nil {
		return nil, fmt.Errorf("hnsw coder search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	live := len(c.byID)
	if live == 0 {
		return nil, nil
	}
	want := min(k, live)
	total := len(c.ids)
	ef := max(c.cfg.EfSearch, k, want+want*c.dead/live+8)
	var hits []Hit
	for {
		ef = min(ef, total)
		hits = hits[:0]
		for _, nd := range c.g.Search(q, ef) {
			if c.alive[nd.Key] {
				hits = append(hits, Hit{ID: c.ids[nd.Key], Score: dot(q, nd.Value)})
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
	return hits, nil
}
