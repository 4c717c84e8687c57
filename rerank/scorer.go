package rerank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/tokenizer"
)

// Engine computes one relevance logit per token sequence. Implementations:
// *Session (ONNX Runtime) and *ReferenceEngine (plain Go). An engine must
// give each sequence the logit it would get alone.
type Engine interface {
	batching.Logiter
	Close() error
}

// PrefixCacheStats counts the cross-request prefix cache's work since the
// session opened.
type PrefixCacheStats struct {
	// Lookups is the number of ORT calls that consulted the cache; Hits
	// those that reused at least one token.
	Lookups, Hits int64
	// ReusedTokens is the prefix tokens not recomputed; ComputedTokens
	// the prefix tokens computed by calls that consulted the cache.
	ReusedTokens, ComputedTokens int64
	// Entries and Bytes describe the cache now; MaxBytes is its bound.
	Entries         int
	Bytes, MaxBytes int64
}

// ScorerConfig sets prompt building and batching.
type ScorerConfig struct {
	Prompt PromptConfig
	// BatchTokens bounds one engine call in the tokens the engine computes:
	// its Cost when it has one (the shared-prefix engine packs rows and
	// computes a shared prefix once), else rows × longest row (padding
	// counted, since such an engine computes it). The server's scheduler
	// budgets by the same cost.
	BatchTokens int
	// MaxBatch bounds the rows of one engine call.
	MaxBatch int
	// MaxPadRatio stops an engine call from growing once its computed
	// tokens would exceed MaxPadRatio × its real tokens (0: no limit), as
	// the server's scheduler.Config.MaxPadRatio does: on CPU, padding is
	// wasted compute, and a cross-encoder's pairs of 15 and 65 words in one
	// call measured slower than one call per pair.
	MaxPadRatio float64
}

// DefaultScorerConfig returns the defaults.
func DefaultScorerConfig() ScorerConfig {
	return ScorerConfig{Prompt: DefaultPromptConfig(), BatchTokens: 8192, MaxBatch: 32, MaxPadRatio: batching.DefaultMaxPadRatio}
}

// Validate reports every problem at once.
func (c ScorerConfig) Validate() error {
	errs := []error{c.Prompt.Validate()}
	if c.BatchTokens < c.Prompt.MaxLength {
		errs = append(errs, fmt.Errorf("batch tokens %d: want >= max length %d (one full prompt)", c.BatchTokens, c.Prompt.MaxLength))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max batch %d: want >= 1", c.MaxBatch))
	}
	if c.MaxPadRatio != 0 && !(c.MaxPadRatio >= 1) {
		errs = append(errs, fmt.Errorf("max pad ratio %v: want 0 (no limit) or >= 1", c.MaxPadRatio))
	}
	return errors.Join(errs...)
}

// Request is one query against several documents.
type Request struct {
	Instruction string   // "" means the template's default instruction
	Query       string   // required
	Context     []string // recent conversation turns, oldest first (optional)
	Docs        []string
	// MaxDocTokens cuts every document to this many tokens (0: only the
	// model's maximum length applies).
	MaxDocTokens int
	// KeepEnd cuts over-long documents from the start, keeping their end.
	KeepEnd bool
	// NoTruncate makes a document that would be cut an error
	// (ErrDocTooLong) instead.
	NoTruncate bool
}

// ErrDocTooLong is returned for a request with NoTruncate whose documents
// do not fit.
var ErrDocTooLong = errors.New("document longer than the model accepts")

// Score is one document's result, in request order.
type Score struct {
	Score     float64 // sigmoid(Logit), in (0, 1)
	Logit     float64 // yes minus no
	Tokens    int     // prompt tokens scored
	Truncated bool    // document (or query) was cut to fit
}

// Scorer turns requests into scores: prompt, truncation, length-sorted
// batches, engine, sigmoid. Safe for concurrent use when its engine is.
type Scorer struct {
	tok    *tokenizer.Tokenizer
	prompt *promptEncoder
	engine Engine
	cfg    ScorerConfig
	// pair and pairModel are set instead of tok and prompt for a
	// cross-encoder (NewPairScorer).
	pair      PairEncoder
	pairModel PairModel
}

// NewScorer combines a tokenizer and an engine.
func NewScorer(tok *tokenizer.Tokenizer, engine Engine, cfg ScorerConfig) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := newPromptEncoder(tok, cfg.Prompt)
	if err != nil {
		return nil, err
	}
	return &Scorer{tok: tok, prompt: p, engine: engine, cfg: cfg}, nil
}

// ErrEmptyQuery is returned for a request whose query is empty.
var ErrEmptyQuery = errors.New("empty query")

// Score scores every document of r against its query.
func (s *Scorer) Score(ctx context.Context, r Request) ([]Score, error) {
	prompts, err := s.PromptsContext(ctx, r)
	if err != nil {
		return nil, err
	}
	logits, err := s.run(ctx, prompts)
	if err != nil {
		return nil, err
	}
	return Results(prompts, logits), nil
}

// Prompts builds the token sequences of a request without scoring them, for
// callers that batch across requests themselves (the server's scheduler).
func (s *Scorer) Prompts(r Request) ([]Prompt, error) {
	return s.PromptsContext(context.Background(), r)
}

// PromptsContext is Prompts that stops with ctx's error (wrapped) once
// ctx is done: checked before each document and, inside a document's
// encoding, every few hundred words, so a request past its deadline or
// whose client left stops tokenizing at once.
func (s *Scorer) PromptsContext(ctx context.Context, r Request) ([]Prompt, error) {
	if s.pair != nil {
		return s.pairPrompts(ctx, r)
	}
	if strings.TrimSpace(r.Query) == "" {
		return nil, ErrEmptyQuery
	}
	if r.MaxDocTokens < 0 {
		return nil, fmt.Errorf("max doc tokens %d: want >= 0", r.MaxDocTokens)
	}
	q, err := s.prompt.encodeQuery(r.Instruction, r.Query, r.Context)
	if err != nil {
		return nil, err
	}
	lim := docLimits{maxTokens: r.MaxDocTokens, keepEnd: r.KeepEnd}
	prompts := make([]Prompt, len(r.Docs))
	for i, d := range r.Docs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tokenize: %w", err)
		}
		if prompts[i], err = s.prompt.encodeDocContext(ctx, q, d, lim); err != nil {
			return nil, err
		}
		if r.NoTruncate && prompts[i].DocCut {
			return nil, fmt.Errorf("%w: document %d needs more than %d tokens", ErrDocTooLong, i, prompts[i].DocTokens)
		}
	}
	return prompts, nil
}

// Results turns logits into scores for prompts, in the same order.
func Results(prompts []Prompt, logits []float32) []Score {
	out := make([]Score, len(prompts))
	for i, p := range prompts {
		out[i] = Score{Score: Sigmoid(float64(logits[i])), Logit: float64(logits[i]), Tokens: len(p.IDs), Truncated: p.Truncated}
	}
	return out
}

// Seqs returns the token ids and token type ids of prompts[i] for each i
// of batch (every prompt when batch is nil), as an engine call and the
// server's scheduler take them: types is nil when no prompt has types.
func Seqs(prompts []Prompt, batch []int) (seqs, types [][]int) {
	n := len(prompts)
	if batch != nil {
		n = len(batch)
	}
	seqs = make([][]int, n)
	for k := range n {
		i := k
		if batch != nil {
			i = batch[k]
		}
		seqs[k] = prompts[i].IDs
		if t := prompts[i].TypeIDs; t != nil {
			if types == nil {
				types = make([][]int, n)
			}
			types[k] = t
		}
	}
	return seqs, types
}

// Engine returns the scorer's engine, for callers that schedule engine
// calls themselves.
func (s *Scorer) Engine() Engine { return s.engine }

// run scores prompts in batches of similar length (less padding), under
// the token budget, and returns logits in input order.
func (s *Scorer) run(ctx context.Context, prompts []Prompt) ([]float32, error) {
	logits := make([]float32, len(prompts))
	for _, batch := range s.Batches(prompts) {
		seqs, types := Seqs(prompts, batch)
		out, err := s.engine.Logits(ctx, seqs, types)
		if err != nil {
			return nil, err
		}
		if len(out) != len(seqs) {
			return nil, fmt.Errorf("engine returned %d logits for %d sequences", len(out), len(seqs))
		}
		for k, i := range batch {
			logits[i] = out[k]
		}
	}
	return logits, nil
}

// Batches returns the engine calls Score makes for prompts, as indices into
// prompts: sorted by length, each call under MaxBatch rows and BatchTokens
// (the engine's cost of the call). Benchmarks use it to count calls and
// padding.
func (s *Scorer) Batches(prompts []Prompt) [][]int {
	seqs, _ := Seqs(prompts, nil)
	return batching.Plan(seqs, s.cfg.MaxBatch, s.cfg.BatchTokens, s.cfg.MaxPadRatio, batching.CostOf(s.engine), batching.FitsOf(s.engine), false)
}

// Sigmoid maps a logit to a probability without overflow.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Tokenizer returns the scorer's tokenizer (nil for a cross-encoder's,
// whose pairs its PairEncoder encodes).
func (s *Scorer) Tokenizer() *tokenizer.Tokenizer { return s.tok }

// Close closes the engine.
func (s *Scorer) Close() error { return s.engine.Close() }

// WithConfig returns a scorer sharing s's tokenizer and engine under other
// prompt and batching settings (benchmarks compare batching this way).
// Closing either closes the shared engine.
func (s *Scorer) WithConfig(cfg ScorerConfig) (*Scorer, error) {
	if s.pair != nil {
		return NewPairScorer(s.pair, s.engine, cfg, s.pairModel)
	}
	if cfg.Prompt.Template == nil {
		t := s.prompt.tmpl
		cfg.Prompt.Template = &t
	}
	return NewScorer(s.tok, s.engine, cfg)
}

// Template returns the prompt template s builds prompts with (the zero
// Template for a cross-encoder, which has none).
func (s *Scorer) Template() Template {
	if s.prompt == nil {
		return Template{}
	}
	return s.prompt.tmpl
}
