package model

import (
	"context"
	"runtime"
	"sync"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/ref"
)

// EmbedEngine computes one pooled vector per token sequence (not
// necessarily normalised; the Embedder normalises). Implementations:
// *EmbeddingSession (ONNX Runtime) and *ReferenceEmbedEngine (plain Go).
// An engine must give each sequence the vector it would get alone.
type EmbedEngine interface {
	Pooled(ctx context.Context, seqs [][]int) ([][]float32, error)
	// Dim is the vector size, or -1 when only a run can tell.
	Dim() int
	// SameLengthBatches reports whether every call must hold sequences of
	// one length.
	SameLengthBatches() bool
	Close() error
}

// ReferenceEmbedEngine runs the plain-Go forward pass (model/ref) over a
// backbone: slow, exact, no ONNX Runtime; the oracle of the embedding
// tests and `--engine reference`.
type ReferenceEmbedEngine struct {
	w *arch.Weights
}

// NewReferenceEmbedEngine returns an engine over w (its head, if any, is
// ignored).
func NewReferenceEmbedEngine(w *arch.Weights) *ReferenceEmbedEngine {
	return &ReferenceEmbedEngine{w: w}
}

// Pooled computes each sequence's normalised last-token vector, in
// parallel across sequences.
func (e *ReferenceEmbedEngine) Pooled(ctx context.Context, seqs [][]int) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	err := forEachParallel(ctx, len(seqs), func(i int) error {
		var err error
		out[i], err = ref.Embedding(e.w, seqs[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Dim is the backbone's hidden size.
func (e *ReferenceEmbedEngine) Dim() int { return e.w.Config.HiddenSize }

// SameLengthBatches is false: every sequence runs alone anyway.
func (e *ReferenceEmbedEngine) SameLengthBatches() bool { return false }

// Close is a no-op: the weights are plain Go memory.
func (e *ReferenceEmbedEngine) Close() error { return nil }

// forEachParallel runs fn(0..n-1) on up to GOMAXPROCS goroutines, stopping
// to start new ones once ctx ends, and returns the first error by index.
func forEachParallel(ctx context.Context, n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
