package hnsw

import (
	"fmt"

	"github.com/rerankd/rerankd/retrieval/embed"
)

// Index is a set of vectors searchable by cosine similarity.
type Index interface {
	// Add inserts vec under id, replacing any vector with the same id.
	// vec is copied and L2-normalised.
	Add(id string, vec []float32) error
	// Delete removes id and reports whether it was present.
	Delete(id string) bool
	// Search returns up to k hits, by Score descending then ID ascending.
	Search(vec []float32, k int) ([]Hit, error)
	// Len returns the number of live vectors.
	Len() int
	// Has reports whether id has a live vector.
	Has(id string) bool
	// Dim returns the vector dimension.
	Dim() int
}

// Hit is one search result.
type Hit struct {
	ID string
	// Score is the cosine similarity with the query, in [-1, 1].
	Score float64
}

// The errors of a vector the index refuses: they are retrieval/embed's,
// whose Check is the one rule every vector is held to (the index refuses
// exactly what Check refuses). Test with errors.Is.
var (
	// ErrZeroVector is returned for a vector whose norm is at most
	// embed.MinNorm: it has no direction, so no cosine.
	ErrZeroVector = embed.ErrZeroVector
	// ErrNonFinite is returned for a vector containing NaN or ±Inf.
	ErrNonFinite = embed.ErrNonFinite
	// ErrDimMismatch is returned, wrapped with both dimensions, for a
	// vector whose length is not the index dimension.
	ErrDimMismatch = embed.ErrDimension
)

// normalize returns a unit-length copy of vec, or why embed.Check refuses
// it for an index of dimension dim.
func normalize(vec []float32, dim int) ([]float32, error) {
	if err := embed.Check(vec, dim); err != nil {
		return nil, fmt.Errorf("hnsw: %w", err)
	}
	return embed.Normalize(vec)
}

// dot is the dot product, accumulated in float64 for stable scores.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// hitLess orders hits by score descending, then ID ascending.
func hitLess(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

func hitCmp(a, b Hit) int {
	switch {
	case hitLess(a, b):
		return -1
	case hitLess(b, a):
		return 1
	}
	return 0
}
