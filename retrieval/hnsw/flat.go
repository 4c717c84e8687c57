package hnsw

import (
	"container/heap"
	"fmt"
	"slices"
	"sync"
)

// Flat is an exact Index: Search scans every vector. It is the recall
// baseline for HNSW and the right choice for small namespaces (a few
// thousand vectors), where a scan is as fast as a graph and exact.
type Flat struct {
	dim int

	mu   sync.RWMutex
	pos  map[string]int // id → position in ids and vecs
	ids  []string
	vecs []float32 // len(ids)*dim, row i is ids[i]'s unit vector
}

var _ Index = (*Flat)(nil)

// NewFlat returns an empty exact index of the given dimension.
func NewFlat(dim int) (*Flat, error) {
	if dim < 1 {
		return nil, fmt.Errorf("hnsw.NewFlat: dimension must be >= 1, got %d", dim)
	}
	return &Flat{dim: dim, pos: make(map[string]int)}, nil
}

// Dim returns the vector dimension.
func (f *Flat) Dim() int { return f.dim }

// Len returns the number of vectors.
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.ids)
}

// Add inserts vec under id, replacing any vector with the same id.
func (f *Flat) Add(id string, vec []float32) error {
	v, err := normalize(vec, f.dim)
	if err != nil {
		return fmt.Errorf("flat add %q: %w", id, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.pos[id]; ok {
		copy(f.vecs[i*f.dim:(i+1)*f.dim], v)
		return nil
	}
	f.pos[id] = len(f.ids)
	f.ids = append(f.ids, id)
	f.vecs = append(f.vecs, v...)
	return nil
}

// Delete removes id and reports whether it was present.
func (f *Flat) Delete(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, ok := f.pos[id]
	if !ok {
		return false
	}
	last := len(f.ids) - 1
	if i != last { // move the last row into the hole
		f.ids[i] = f.ids[last]
		copy(f.vecs[i*f.dim:(i+1)*f.dim], f.vecs[last*f.dim:])
		f.pos[f.ids[i]] = i
	}
	f.ids = f.ids[:last]
	f.vecs = f.vecs[:last*f.dim]
	delete(f.pos, id)
	return true
}

// Search returns the exact k nearest vectors by cosine similarity.
func (f *Flat) Search(vec []float32, k int) ([]Hit, error) {
	q, err := normalize(vec, f.dim)
	if err != nil {
		return nil, fmt.Errorf("flat search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := make(worst, 0, min(k, len(f.ids)))
	for i, id := range f.ids {
		hit := Hit{ID: id, Score: dot(q, f.vecs[i*f.dim:(i+1)*f.dim])}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if hitLess(hit, h[0]) {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	out := []Hit(h)
	slices.SortFunc(out, hitCmp)
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// worst is a heap whose root is the worst hit kept so far.
type worst []Hit

func (h worst) Len() int           { return len(h) }
func (h worst) Less(i, j int) bool { return hitLess(h[j], h[i]) }
func (h worst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worst) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *worst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
