package store

import (
	"fmt"

	"github.com/rerankd/rerankd/retrieval/memory"
)

const (
	// MaxDimension bounds the vector dimensions every backend accepts and
	// decodes.
	MaxDimension = 1 << 16
	// MaxPage bounds Page's and Changes' limit, so that one call cannot
	// hold a read transaction (bbolt: blocking the growth of its memory
	// map for writers) or a result set (PostgreSQL) for long.
	MaxPage = 10000
)

// Record is one memory with its embedding (nil if it has none), as Page,
// GetMany and ForEach return it.
type Record struct {
	Memory memory.Memory
	Vector []float32
}

// Item is one memory and its optional embedding, for PutBatch.
type Item struct {
	Memory memory.Memory
	Vector []float32 // nil: no embedding
}

// Problem is one defect found by a backend's check.
type Problem struct {
	Namespace string
	ID        string // empty for namespace-level problems
	Kind      string // "memory", "vector", "orphan-vector", "namespace", "vecgen"
	Err       error
}

func (p Problem) String() string {
	return fmt.Sprintf("%s %s/%s: %v", p.Kind, p.Namespace, p.ID, p.Err)
}

// CheckStats summarises a check run.
type CheckStats struct {
	Namespaces, Memories, Vectors, Problems int
}

// VectorGen identifies one state of a namespace's vectors. Every write
// that changes them (a vector stored, or one removed by a Put without a
// vector or by Delete) gives the namespace a new VectorGen in the same
// transaction, so an index saved with the VectorGen it was built at is
// exactly the store's vectors as long as the namespace still has that
// VectorGen. The zero VectorGen means "none recorded": the namespace has
// had no vector write since generations were introduced (or has none).
type VectorGen struct {
	// Seq counts the changes, for people reading logs. It restarts when
	// the namespace is deleted, so it alone cannot identify a state.
	Seq uint64
	// Stamp is drawn at random at every change. It is what makes equal
	// VectorGens mean equal vectors even when Seq repeats: a namespace
	// deleted and re-created, or an older copy of the store file restored
	// from a backup and written to again.
	Stamp uint64
}

// IsZero reports whether g is the zero VectorGen (none recorded).
func (g VectorGen) IsZero() bool { return g == VectorGen{} }

func (g VectorGen) String() string { return fmt.Sprintf("%d/%016x", g.Seq, g.Stamp) }

// ForEachOption configures ForEach.
type ForEachOption func(*forEachConfig)

type forEachConfig struct {
	progress func(done, total int)
	every    int
}

// WithProgress makes ForEach call fn(done, total) after every `every`
// records and once at the end; total is the number of memories in the store
// when iteration started. every ≤ 0 means 1000.
func WithProgress(every int, fn func(done, total int)) ForEachOption {
	return func(c *forEachConfig) {
		if every <= 0 {
			every = 1000
		}
		c.progress, c.every = fn, every
	}
}

// ForEachSettings resolves ForEach options for a backend: the progress
// callback (nil if none) and its interval.
func ForEachSettings(opts ...ForEachOption) (progress func(done, total int), every int) {
	var cfg forEachConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg.progress, cfg.every
}
