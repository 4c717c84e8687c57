package embed

import (
	"errors"
	"fmt"
	"math"
)

// Errors. All are returned wrapped with details; test with errors.Is.
var (
	// ErrDimension marks a vector whose length is not the expected one.
	ErrDimension = errors.New("vector dimension mismatch")
	// ErrNonFinite marks a vector holding NaN or ±Inf.
	ErrNonFinite = errors.New("vector has a NaN or infinite value")
	// ErrZeroVector marks a vector of (near) zero norm: it has no
	// direction. Retrieval keeps such a memory lexically searchable but out
	// of the vector index, so callers usually test for it separately.
	ErrZeroVector = errors.New("zero vector has no direction")
)

// MinNorm is the smallest L2 norm treated as a direction. At or below it,
// dividing by the norm amplifies rounding noise into an arbitrary unit
// vector, so such a vector is a zero vector (ErrZeroVector).
const MinNorm = 1e-30

// Check is rerankd's one vector-validity rule: it reports why v cannot go
// into (or query) a vector index of dimension dim, or nil when it can. Its
// length must be dim (ErrDimension, naming both; a dim of 0 accepts
// nothing), every value finite (ErrNonFinite, naming the first bad index)
// and its L2 norm above MinNorm (ErrZeroVector). The HNSW and flat
// indexes refuse exactly what Check refuses, and retrieval tests every
// write, build, back-fill and query vector with it, so a vector is never
// acknowledged as indexed and then missing from the index.
func Check(v []float32, dim int) error {
	if len(v) != dim || dim == 0 {
		return fmt.Errorf("%w: expected %d values, got %d", ErrDimension, dim, len(v))
	}
	_, err := norm(v)
	return err
}

// Normalize returns v scaled to unit L2 norm, as a new slice (summed in
// float64). A vector with NaN/Inf (ErrNonFinite) or of norm at most
// MinNorm (ErrZeroVector) cannot be normalised.
func Normalize(v []float32) ([]float32, error) {
	n, err := norm(v)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out, nil
}

// norm returns the L2 norm of v, or why v has no usable direction.
func norm(v []float32) (float64, error) {
	var ss float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%w: value %d is %v", ErrNonFinite, i, x)
		}
		ss += f * f
	}
	// Squares of finite float32 values cannot overflow a float64 sum.
	n := math.Sqrt(ss)
	if !(n > MinNorm) {
		return 0, fmt.Errorf("%w (norm %g)", ErrZeroVector, n)
	}
	return n, nil
}
