package hnsw

import (
	"errors"
	"fmt"
)

// Config holds the parameters of an approximate index. The defaults and
// the measurements behind them are in the package documentation.
type Config struct {
	// Dim is the vector dimension, e.g. 1024. Required, >= 1.
	Dim int
	// M is the maximum number of neighbours per node on the upper layers;
	// layer 0 keeps up to 2*M. More links keep high-dimensional graphs
	// navigable (better recall at the same EfSearch) at the cost of memory
	// (8·M bytes per node on layer 0) and build time (about proportional).
	// Default 16; must be >= 2.
	M int
	// EfConstruction is the candidate list size while inserting. Larger
	// builds a better graph, slower (build time is about proportional).
	// Default 200; must be >= M.
	EfConstruction int
	// EfSearch is the candidate list size while searching (at least k is
	// used). Larger gives better recall, slower. Default 200; must be >= 1.
	EfSearch int
	// ScanContrast makes Search answer by an exact scan when the graph
	// search's best hit is farther from the query (cosine distance) than
	// ScanContrast times the mean distance to a fixed sample of 32 nodes:
	// a contrast that low means the data has no structure near the query
	// (uniform random vectors, a query unlike anything stored), where a
	// graph search cannot reach recall 0.95 faster than a scan. 0 disables
	// it; at most 1. Default 0.8: for uniform random vectors of 100k the
	// ratio is ~0.86 at 1024-d and ~0.84 at 768-d; for clustered vectors
	// and typical embedding queries (best cosine 0.5-0.9 against ~0.1 for
	// an unrelated memory) it is ~0.1-0.55.
	ScanContrast float64
	// Seed seeds the level generator, so that the same inserts build the
	// same graph. Default 0 is a valid seed.
	Seed int64
}

// DefaultConfig returns the defaults for vectors of dimension dim.
func DefaultConfig(dim int) Config {
	return Config{Dim: dim, M: 16, EfConstruction: 200, EfSearch: 200, ScanContrast: 0.8}
}

// Validate reports every invalid field, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Dim < 1 {
		errs = append(errs, fmt.Errorf("hnsw: Dim must be >= 1, got %d", c.Dim))
	}
	if c.M < 2 {
		errs = append(errs, fmt.Errorf("hnsw: M must be >= 2, got %d", c.M))
	}
	if c.EfConstruction < c.M {
		errs = append(errs, fmt.Errorf("hnsw: EfConstruction (%d) must be >= M (%d)", c.EfConstruction, c.M))
	}
	if !(c.ScanContrast >= 0 && c.ScanContrast <= 1) {
		errs = append(errs, fmt.Errorf("hnsw: ScanContrast must be in [0, 1], got %v", c.ScanContrast))
	}
	if c.EfSearch < 1 {
		errs = append(errs, fmt.Errorf("hnsw: EfSearch must be >= 1, got %d", c.EfSearch))
	}
	return errors.Join(errs...)
}
