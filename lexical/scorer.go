package lexical

import (
	"errors"
	"fmt"
	"math"
)

// Config holds the scorer's parameters. The zero value is not valid; start
// from DefaultConfig.
type Config struct {
	// K1 controls term-frequency saturation in BM25: 0 makes matching
	// binary (a term counts the same however often it occurs), larger
	// values let repeated occurrences keep adding score. Must be in
	// [0, MaxK1] (CheckK1; typical values are 0.5–2). Default 1.2.
	K1 float64

	// B controls document-length normalization in BM25: 0 ignores length,
	// 1 fully normalizes term frequency by length relative to the average
	// length of the request's documents. Must be in [0, 1] (CheckB).
	// Default 0.75.
	B float64

	// Saturation is the score, before the Margin squeeze, that a document
	// reaching the query's maximum attainable BM25 would get; it sets how
	// fast Score approaches 1 (see doc.go for the formula). Must be in
	// (0, 1). Default 0.99, which puts a document that contains every query
	// term once at average length at about 0.88, and twice at about 0.94.
	Saturation float64

	// Margin keeps scores strictly inside (0, 1), as the API promises: the
	// mapped value s in [0, 1) becomes Margin + (1 - 2·Margin)·s, so a
	// document matching nothing gets exactly Margin. Must be in
	// [1e-12, 0.01]. Default 1e-6.
	Margin float64

	// CJK selects how Chinese, Japanese and Korean text is split into
	// terms; see CJKMode. Empty means DefaultCJK. A gse mode makes New load
	// the gse dictionary (seconds, once per process).
	CJK CJKMode
}

// DefaultConfig returns the recommended parameters: the classic BM25
// K1 = 1.2 and B = 0.75, Saturation 0.99, Margin 1e-6 and DefaultCJK.
func DefaultConfig() Config {
	return Config{K1: 1.2, B: 0.75, Saturation: 0.99, Margin: 1e-6, CJK: DefaultCJK}
}

// Validate reports every invalid field at once, joined with errors.Join,
// or nil when the configuration is usable.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("lexical: "+format, args...))
	}
	for _, err := range []error{CheckK1(c.K1), CheckB(c.B)} {
		if err != nil {
			bad("%w", err)
		}
	}
	if math.IsNaN(c.Saturation) || c.Saturation <= 0 || c.Saturation >= 1 {
		bad("Saturation = %v: must be in (0, 1)", c.Saturation)
	}
	if math.IsNaN(c.Margin) || c.Margin < 1e-12 || c.Margin > 0.01 {
		bad("Margin = %v: must be in [1e-12, 0.01]", c.Margin)
	}
	if _, err := ParseCJKMode(string(c.CJK)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Result is the score of one document.
type Result struct {
	// Score is the mapped lexical score, strictly inside (0, 1) and
	// monotonic in Raw within one request. It measures word overlap with
	// the query, not a calibrated probability of relevance.
	Score float64
	// Raw is the document's BM25 score within the request (>= 0).
	Raw float64
	// Tokens is the number of index terms in the document (words,
	// stopwords included, plus the CJK terms of the Config.CJK mode).
	Tokens int
}

// Scorer scores documents against a query with BM25. It holds only its
// configuration and a read-only Analyzer, so one Scorer is safe for
// concurrent use.
type Scorer struct {
	cfg Config
	// logRest is log(1 - Saturation), precomputed for the mapping.
	logRest float64
	an      *Analyzer
}

// New returns a Scorer for cfg, or the errors of cfg.Validate. A gse CJK
// mode loads the gse dictionary here, on the first such call in the
// process, so that no request pays for it.
func New(cfg Config) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	an, err := NewAnalyzer(cfg.CJK)
	if err != nil {
		return nil, err
	}
	cfg.CJK = an.Mode()
	return &Scorer{cfg: cfg, logRest: math.Log1p(-cfg.Saturation), an: an}, nil
}

// Default returns a Scorer with DefaultConfig.
func Default() *Scorer {
	s, err := New(DefaultConfig())
	if err != nil {
		panic(err) // DefaultConfig is valid; covered by tests.
	}
	return s
}

// Config returns the scorer's configuration.
func (s *Scorer) Config() Config { return s.cfg }

// Score returns one Result per document, in the order of docs. The
// documents of this request are the BM25 collection: IDF and average
// length come from them alone. Score is pure and deterministic: the same
// query and documents always give the same results. It never returns NaN
// or Inf; an empty query, or a query with no usable term, gives every
// document the floor score Margin.
func (s *Scorer) Score(query string, docs []string) []Result {
	results := make([]Result, len(docs))
	if len(docs) == 0 {
		return results
	}
	q := s.an.analyzeQuery(query)
	c := s.collect(q, docs, results)
	raws, maxRaw := s.bm25(c, results)
	for i := range results {
		results[i].Raw = raws[i]
		results[i].Score = s.mapScore(raws[i], maxRaw)
	}
	return results
}

// mapScore maps a raw BM25 score into (0, 1); see doc.go.
func (s *Scorer) mapScore(raw, maxRaw float64) float64 {
	m := s.cfg.Margin
	if !(raw > 0) || !(maxRaw > 0) || math.IsInf(raw, 0) || math.IsInf(maxRaw, 0) {
		return m
	}
	x := raw / maxRaw
	if x > 1 {
		x = 1
	}
	v := -math.Expm1(x * s.logRest) // 1 - (1-Saturation)^x, in [0, Saturation]
	score := m + (1-2*m)*v
	if !(score >= m) { // also catches NaN
		return m
	}
	if score > 1-m {
		return 1 - m
	}
	return score
}
