package batching

import "context"

// The contract of an engine call, declared once for the reranker
// (rerank.Scorer), the server's scheduler and the engines model opens.

// Logiter computes one logit per token sequence; a sequence's logit must
// not depend on the other sequences of the call.
type Logiter interface {
	Logits(ctx context.Context, seqs [][]int) ([]float32, error)
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
