package scoring

import (
	"context"
	"time"

	"github.com/rerankd/rerankd/rerank"
)

// Backend scores documents against a query. Implementations: the neural
// reranker (ONNX model through the scheduler) and the lexical default.
type Backend interface {
	// Name says which scorer answered; it is in /info and every response.
	Name() string
	// ModelID names the model (folder or repo) for /info and responses.
	ModelID() string
	// Score scores r.Docs in order.
	Score(ctx context.Context, r rerank.Request) (Scored, error)
	// MaxTokens is the prompt length limit (for /info).
	MaxTokens() int
	// Close releases the backend after in-flight work is done.
	Close(ctx context.Context) error
}

// Scored is a backend's answer with its timing, reported in headers.
type Scored struct {
	Scores []rerank.Score
	Timing Timing
	// Batches is the number of engine calls that carried the pairs (0 for a
	// backend without a scheduler).
	Batches int
}

// Timing splits a request's time the way text-embeddings-inference reports
// it: tokenization, waiting in the queue, and inference.
type Timing struct {
	Tokenize, Queue, Inference time.Duration
}
