package batching

import (
	"context"
	"errors"
	"fmt"
)

// The contract of an engine call, declared once for the reranker
// (rerank.Scorer), the server's scheduler and the engines model opens.

// Logiter computes one logit per token sequence; a sequence's logit must
// not depend on the other sequences of the call. types carries a
// cross-encoder's token type ids beside the ids: nil when no sequence has
// any (every decoder), else one entry per sequence, nil (all 0) or as long
// as its sequence. An engine whose model has no token types fails a call
// that carries some (ErrTokenTypes).
type Logiter interface {
	Logits(ctx context.Context, seqs, types [][]int) ([]float32, error)
}

// ErrTokenTypes is returned by an engine whose model has no token types
// when a call carries some.
var ErrTokenTypes = errors.New("token type ids given to a model without token types")

// CheckNoTypes is an untyped engine's check of a call's types: nil when
// every sequence's types are nil, else ErrTokenTypes.
func CheckNoTypes(types [][]int) error {
	for i, t := range types {
		if t != nil {
			return fmt.Errorf("%w (sequence %d)", ErrTokenTypes, i)
		}
	}
	return nil
}

// CheckTypes checks that types fits seqs as Logiter says: nil, or one
// entry per sequence, each nil or as long as its sequence.
func CheckTypes(seqs, types [][]int) error {
	if types == nil {
		return nil
	}
	if len(types) != len(seqs) {
		return fmt.Errorf("%d token type rows for %d sequences", len(types), len(seqs))
	}
	for i, t := range types {
		if t != nil && len(t) != len(seqs[i]) {
			return fmt.Errorf("sequence %d: %d token type ids for %d ids", i, len(t), len(seqs[i]))
		}
	}
	return nil
}

// Coster is implemented by engines that do not compute rows × longest row
// (Padded), such as the shared-prefix engine, which packs rows without
// padding and computes a shared prefix once: Cost is the tokens one call
// over seqs computes. Batches are budgeted and grouped by it.
type Coster interface {
	Cost(seqs [][]int) int
}

// CostOf is e's Cost, or Padded for an engine that pads every row.
func CostOf(e Logiter) Cost {
	if c, ok := e.(Coster); ok {
		return c.Cost
	}
	return Padded
}

// Fits reports that one engine call over seqs stays within the engine's
// own bound. It must not keep or change seqs.
type Fits func(seqs [][]int) bool

// CallBounder is implemented by engines that bound their calls by more
// than the tokens they compute: a padded encoder's attention scores grow
// with rows × longest row², so a call of a few long rows holds far more
// memory than its tokens say, and ONNX Runtime's arena keeps what the
// largest call needed. CallFits reports that one call over seqs is within
// that bound; the scheduler and Plan grow a call only while it holds,
// under their token budget, and run a single sequence whatever it says.
type CallBounder interface {
	CallFits(seqs [][]int) bool
}

// FitsOf is e's CallFits, or nil for an engine without a bound of its
// own.
func FitsOf(e Logiter) Fits {
	if b, ok := e.(CallBounder); ok {
		return b.CallFits
	}
	return nil
}
