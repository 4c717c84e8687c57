package model

import (
	"context"
	"runtime"
	"sync"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/ref"
)

// ReferenceEngine runs the plain-Go forward pass (model/ref): slow, exact,
// no ONNX Runtime. It scores each sequence alone, so batching cannot change
// a score. Used by tests as the oracle and by `rerankd score --engine
// reference` to cross-check a model folder.
type ReferenceEngine struct {
	w    *arch.Weights
	head []float32 // yes-row minus no-row of the output head
}

// NewReferenceEngine returns an engine over w with the folded head.
func NewReferenceEngine(w *arch.Weights, head []float32) *ReferenceEngine {
	return &ReferenceEngine{w: w, head: head}
}

// Logits computes each sequence's logit, in parallel across sequences.
// A decoder has no token types: types must be nil.
func (e *ReferenceEngine) Logits(ctx context.Context, seqs, types [][]int) ([]float32, error) {
	if err := batching.CheckNoTypes(types); err != nil {
		return nil, err
	}
	out := make([]float32, len(seqs))
	errs := make([]error, len(seqs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, s := range seqs {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = ref.Logit(e.w, e.head, s)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, ctx.Err()
}

// Close is a no-op: the weights are plain Go memory.
func (e *ReferenceEngine) Close() error { return nil }
