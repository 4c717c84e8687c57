package hnsw

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"
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

	scores sync.Pool // *[]float32 scratch for Search's float32 pass
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

// Has reports whether id has a vector in the index.
func (f *Flat) Has(id string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.pos[id]
	return ok
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
	if len(f.ids) == 0 {
		return nil, nil
	}
	return scanTopK(q, f.vecs, f.ids, nil, k, &f.scores), nil
}

// scanTopK is the exact top k of q over rows of vecs (row i is ids[i]'s
// unit vector), skipping rows whose alive entry is false (alive nil: all
// rows count), by Score descending then ID ascending. scratch pools the
// float32 score buffer.
//
// Why two passes: a float64 scalar dot costs ~16x a float32 SIMD one at
// 1024 dimensions, and the scan is the whole cost. So every row is scored
// in float32 (SIMD), and only rows that could still be in the exact top k
// are rescored in float64. A float32 dot of two unit vectors is within
// eps = 2·dim·2⁻²⁴ of the exact one (each of the dim products and sums
// rounds once, and Σ|qᵢvᵢ| <= 1). If t is the k-th best float32 score, the
// k rows at or above t are all truly >= t-eps, so the exact k-th score is
// >= t-eps and every true top-k row has a float32 score >= t-2·eps: the
// candidates above that bar (usually k plus a handful) hold the exact top
// k, with the same scores and ties as a float64 scan.
func scanTopK(q, vecs []float32, ids []string, alive []bool, k int, scratch *sync.Pool) []Hit {
	n, d := len(ids), len(q)
	sp, _ := scratch.Get().(*[]float32)
	if sp == nil {
		sp = new([]float32)
	}
	defer scratch.Put(sp)
	if cap(*sp) < n {
		*sp = make([]float32, n)
	}
	s := (*sp)[:0]
	rows := n
	for i := range n {
		if alive != nil && !alive[i] {
			rows--
			s = append(s, float32(math.Inf(-1)))
			continue
		}
		s = append(s, vek32.Dot(q, vecs[i*d:(i+1)*d]))
	}
	if rows == 0 {
		return nil
	}
	bar := float32(math.Inf(-1))
	if k < rows {
		bar = kthLargest(s, k) - float32(2*float64(d)*0x1p-24)
	}
	h := make(worst, 0, min(k, rows)+1)
	for i, x := range s {
		if x < bar || (alive != nil && !alive[i]) {
			continue
		}
		hit := Hit{ID: ids[i], Score: dot(q, vecs[i*d:(i+1)*d])}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if hitLess(hit, h[0]) {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	out := []Hit(h)
	slices.SortFunc(out, hitCmp)
	return out
}

// kthLargest returns the k-th largest of s (1 <= k <= len(s)) with a
// min-heap of the k largest seen, O(n log k) and no copy of s.
func kthLargest(s []float32, k int) float32 {
	h := make([]float32, 0, k)
	for _, x := range s {
		if len(h) < k {
			h = append(h, x)
			for i := len(h) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if h[p] <= h[i] {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if x <= h[0] {
			continue
		}
		h[0] = x
		for i := 0; ; { // sift down
			l, r, m := 2*i+1, 2*i+2, i
			if l < k && h[l] < h[m] {
				m = l
			}
			if r < k && h[r] < h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	return h[0]
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
