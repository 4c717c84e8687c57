package rerank

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// PairEncoder encodes a cross-encoder's (query, document) pair with the
// model's own tokenizer post-processor ("<s> q </s></s> d </s>", "[CLS] q
// [SEP] d [SEP]" with type ids), cut LongestFirst so that the ids, special
// tokens counted, fit maxLen; truncated reports that text tokens were cut.
// typeIDs may be nil (all 0).
type PairEncoder interface {
	EncodePair(query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error)
}

// ContextPairEncoder is a PairEncoder whose encoding stops with the
// context's error once it is done (a request's deadline, a client gone),
// so a huge document stops costing CPU when nobody waits for it.
type ContextPairEncoder interface {
	EncodePairContext(ctx context.Context, query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error)
}

// PairModel describes the cross-encoder a pair scorer runs.
type PairModel struct {
	// Name names the model in errors (its folder or repo id).
	Name string
}

// ErrNoPrompt is returned for a request carrying an instruction or
// conversation context to a cross-encoder, which has no prompt to put them
// in.
var ErrNoPrompt = errors.New("this model has no prompt: instruction and context are not accepted")

// ErrPairTruncation is returned for a per-document cut or a cut from the
// start on a cross-encoder, whose pairs are cut LongestFirst only.
var ErrPairTruncation = errors.New("this model cuts a (query, document) pair longest side first only")

// NewPairScorer returns a Scorer for a cross-encoder (BERT, XLM-R): each
// document is one pair enc encodes, cut to cfg.Prompt.MaxLength; there is
// no template, instruction or context. Batching is as for NewScorer.
func NewPairScorer(enc PairEncoder, engine Engine, cfg ScorerConfig, m PairModel) (*Scorer, error) {
	if enc == nil {
		return nil, errors.New("pair scorer: nil pair encoder")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Scorer{pair: enc, pairModel: m, engine: engine, cfg: cfg}, nil
}

// IsPair reports whether s scores cross-encoder pairs (NewPairScorer).
func (s *Scorer) IsPair() bool { return s.pair != nil }

// pairPrompts is Prompts for a cross-encoder.
func (s *Scorer) pairPrompts(ctx context.Context, r Request) ([]Prompt, error) {
	var errs []error
	if r.Instruction != "" || len(r.Context) > 0 {
		errs = append(errs, fmt.Errorf("%w (model %s is a cross-encoder: send the query and documents only)", ErrNoPrompt, s.pairModel.Name))
	}
	if r.MaxDocTokens > 0 || r.KeepEnd {
		errs = append(errs, fmt.Errorf("%w (model %s: no per-document cut and no cut from the start; the pair is cut to %d tokens)",
			ErrPairTruncation, s.pairModel.Name, s.cfg.Prompt.MaxLength))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Query) == "" {
		return nil, ErrEmptyQuery
	}
	prompts := make([]Prompt, len(r.Docs))
	cp, _ := s.pair.(ContextPairEncoder)
	for i, d := range r.Docs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tokenize: %w", err)
		}
		var (
			ids, types []int
			cut        bool
			err        error
		)
		if cp != nil {
			ids, types, cut, err = cp.EncodePairContext(ctx, r.Query, d, s.cfg.Prompt.MaxLength)
		} else {
			ids, types, cut, err = s.pair.EncodePair(r.Query, d, s.cfg.Prompt.MaxLength)
		}
		if ctx.Err() != nil && err != nil {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if types != nil && len(types) != len(ids) {
			return nil, fmt.Errorf("document %d: pair encoder returned %d type ids for %d ids", i, len(types), len(ids))
		}
		if r.NoTruncate && cut {
			return nil, fmt.Errorf("%w: document %d and the query need more than %d tokens", ErrDocTooLong, i, s.cfg.Prompt.MaxLength)
		}
		prompts[i] = Prompt{IDs: ids, TypeIDs: types, Truncated: cut, DocCut: cut}
	}
	return prompts, nil
}
