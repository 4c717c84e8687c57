package hnsw

import (
	"errors"
	"fmt"
	"math"
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

var (
	// ErrZeroVector is returned for a vector whose norm is zero (or too
	// small to normalise): it has no direction, so no cosine.
	ErrZeroVector = errors.New("hnsw: zero vector has no direction")
	// ErrNonFinite is returned for a vector containing NaN or ±Inf.
	ErrNonFinite = errors.New("hnsw: vector has a NaN or infinite component")
	// ErrDimMismatch is returned, wrapped with both dimensions, for a
	// vector whose length is not the index dimension.
	ErrDimMismatch = errors.New("hnsw: dimension mismatch")
)

// normalize returns a unit-length copy of vec, or an error if vec has the
// wrong dimension, a non-finite component or zero norm.
func normalize(vec []float32, dim int) ([]float32, error) {
	if len(vec) != dim {
		return nil, fmt.Errorf("%w: vector has %d dimensions, index has %d", ErrDimMismatch, len(vec), dim)
	}
	var sum float64
	for i, v := range vec {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w (component %d is %v)", ErrNonFinite, i, v)
		}
		sum += f * f
	}
	norm := math.Sqrt(sum)
	if !(norm > 1e-30) || math.IsInf(norm, 0) {
		return nil, fmt.Errorf("%w (norm %g)", ErrZeroVector, norm)
	}
	out := make([]float32, len(vec))
	for i, v := range vec {
		out[i] = float32(float64(v) / norm)
	}
	return out, nil
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
