package bm25

import (
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/lexical"
)

// Config holds the BM25 parameters.
type Config struct {
	// K1 controls term-frequency saturation: 0 ignores repetitions, larger
	// values let repeated terms keep adding score. Must be in [0,
	// lexical.MaxK1] (lexical.CheckK1, the rule the request scorer and a
	// search's ranking follow too). Default 1.2.
	K1 float64
	// B controls length normalisation: 0 ignores document length, 1
	// normalises fully by length/average length. Must be in [0, 1]
	// (lexical.CheckB). Default 0.75.
	B float64
}

// DefaultConfig returns the usual BM25 parameters, K1 1.2 and B 0.75.
func DefaultConfig() Config { return Config{K1: 1.2, B: 0.75} }

// Validate reports every invalid field, joined.
func (c Config) Validate() error {
	var errs []error
	for _, err := range []error{lexical.CheckK1(c.K1), lexical.CheckB(c.B)} {
		if err != nil {
			errs = append(errs, fmt.Errorf("bm25: %w", err))
		}
	}
	return errors.Join(errs...)
}
