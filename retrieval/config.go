package retrieval

import (
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/post"
)

// VectorIndex is what the Engine needs from an approximate nearest
// neighbour index; retrieval/hnsw's implementations satisfy it. Vectors are
// normalised by the index; Add refuses zero vectors and wrong dimensions.
type VectorIndex interface {
	Add(id string, vec []float32) error
	Delete(id string) bool
	Search(vec []float32, k int) ([]hnsw.Hit, error)
	Len() int
}

// Config configures an Engine. Start from DefaultConfig.
type Config struct {
	// BM25 holds the lexical index parameters (k1 1.2, b 0.75 by default).
	BM25 bm25.Config
	// Fusion combines BM25 and vector hits at the hybrid level (weighted sum
	// 0.7 vector / 0.3 BM25 by default, or RRF).
	Fusion post.FusionConfig
	// Dim is the vector dimension for client-supplied vectors when there is
	// no Embedder; 0 means the engine has no vector index unless an Embedder
	// gives one. With an Embedder it must be 0 or equal the Embedder's Dim.
	Dim int
	// NewVectorIndex makes an empty vector index for one namespace; nil uses
	// hnsw.NewIndex with hnsw.DefaultConfig(dim).
	NewVectorIndex func(dim int) (VectorIndex, error)
	// Depth is how many hits each retriever contributes before fusion when
	// the query does not say. Default 100.
	Depth int
	// ScanLimit bounds how many memories a scan-level search reads from the
	// store (the newest are not preferred: IDs are read in byte order).
	// Default 20000.
	ScanLimit int
	// PageSize is how many records the start-up build reads per store read
	// transaction; smaller pages block writers for less time. Default 1000.
	PageSize int
	// Progress, when set, is called during the start-up build with the
	// number of memories indexed so far and the total, per phase ("bm25",
	// then "vector"). It must be fast and must not call the Engine.
	Progress func(phase string, done, total int)
}

// DefaultConfig returns the defaults documented on Config's fields.
func DefaultConfig() Config {
	return Config{
		BM25:      bm25.DefaultConfig(),
		Fusion:    post.DefaultFusionConfig(),
		Depth:     100,
		ScanLimit: 20000,
		PageSize:  1000,
	}
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if err := c.BM25.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Fusion.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Dim < 0 {
		errs = append(errs, fmt.Errorf("retrieval: Dim %d must be >= 0", c.Dim))
	}
	if c.Depth < 1 {
		errs = append(errs, fmt.Errorf("retrieval: Depth %d must be >= 1", c.Depth))
	}
	if c.ScanLimit < 1 {
		errs = append(errs, fmt.Errorf("retrieval: ScanLimit %d must be >= 1", c.ScanLimit))
	}
	if c.PageSize < 1 || c.PageSize > 10000 {
		errs = append(errs, fmt.Errorf("retrieval: PageSize %d must be in 1..10000", c.PageSize))
	}
	return errors.Join(errs...)
}

func (c Config) newVectorIndex(dim int) (VectorIndex, error) {
	if c.NewVectorIndex != nil {
		return c.NewVectorIndex(dim)
	}
	h, err := hnsw.NewIndex(hnsw.DefaultConfig(dim))
	if err != nil {
		return nil, err
	}
	return h, nil
}
