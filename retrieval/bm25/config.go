package bm25

import (
	"errors"
	"fmt"
	"math"
)

// Config holds the BM25 parameters.
type Config struct {
	// K1 controls term-frequency saturation: 0 ignores repetitions, larger
	// values let repeated terms keep adding score. Must be finite and >= 0.
	// Default 1.2.
	K1 float64
	// B controls length normalisation: 0 ignores document length, 1
	// normalises fully by length/average length. Must be in [0, 1].
	// Default 0.75.
	B float64
}

// DefaultConfig returns the usual BM25 parameters, K1 1.2 and B 0.75.
func DefaultConfig() Config { return Config{K1: 1.2, B: 0.75} }

// Validate reports every invalid field, joined.
func (c Config) Validate() error {
	var errs []error
	if math.IsNaN(c.K1) || math.IsInf(c.K1, 0) || c.K1 < 0 {
		errs = append(errs, fmt.Errorf("bm25: K1 must be finite and >= 0, got %v", c.K1))
	}
	if !(c.B >= 0 && c.B <= 1) {
		errs = append(errs, fmt.Errorf("bm25: B must be in [0, 1], got %v", c.B))
	}
	return errors.Join(errs...)
}
