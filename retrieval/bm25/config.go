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
	// Analyzer turns documents and queries into terms; nil is lexical's
	// default (lexical.Terms and lexical.QueryTerms: CJK unigram+bigram).
	// Set it to index Chinese or Japanese with another lexical.CJKMode
	// (lexical.NewAnalyzer). Only New reads it: the parameters given to
	// SearchTerms use K1 and B alone.
	Analyzer *lexical.Analyzer
}

// Analysis returns the Analyzer an index of c uses: c.Analyzer, or
// lexical's default when it is nil.
func (c Config) Analysis() *lexical.Analyzer {
	if c.Analyzer != nil {
		return c.Analyzer
	}
	return defaultAnalyzer
}

// defaultAnalyzer is lexical's default analysis; DefaultCJK needs no
// dictionary, so making it cannot fail.
var defaultAnalyzer = func() *lexical.Analyzer {
	a, err := lexical.NewAnalyzer(lexical.DefaultCJK)
	if err != nil {
		panic(err)
	}
	return a
}()

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
