package scoring

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/tracing/span"
)

// Neural is the cross-encoder backend: prompts are built in the request's
// goroutine, then scored through the shared scheduler.
type Neural struct {
	scorer *rerank.Scorer
	sched  *scheduler.Scheduler
	id     string
	maxLen int
}

// NewNeural wraps a scorer and the scheduler that runs its engine.
func NewNeural(id string, s *rerank.Scorer, sched *scheduler.Scheduler, maxLen int) *Neural {
	return &Neural{scorer: s, sched: sched, id: id, maxLen: maxLen}
}

// Name implements Backend.
func (n *Neural) Name() string { return "onnx" }

// ModelID implements Backend.
func (n *Neural) ModelID() string { return n.id }

// MaxTokens implements Backend.
func (n *Neural) MaxTokens() int { return n.maxLen }

// Score implements Backend.
func (n *Neural) Score(ctx context.Context, r rerank.Request) (Scored, error) {
	start := time.Now()
	_, sp := span.Start(ctx, tracerName, "rerankd.tokenize", attribute.Int("rerankd.documents", len(r.Docs)))
	prompts, err := n.scorer.PromptsContext(ctx, r)
	if err == nil {
		tokens, truncated := 0, 0
		for _, p := range prompts {
			tokens += len(p.IDs)
			if p.Truncated {
				truncated++
			}
		}
		sp.SetAttributes(attribute.Int("rerankd.tokens", tokens), attribute.Int("rerankd.truncated", truncated))
	}
	span.End(sp, err)
	if err != nil {
		return Scored{}, err
	}
	tokenize := time.Since(start)
	seqs, types := rerank.Seqs(prompts, nil)
	res, err := n.sched.Submit(ctx, seqs, types)
	if err != nil {
		return Scored{}, err
	}
	return Scored{Scores: rerank.Results(prompts, res.Logits), Timing: Timing{Tokenize: tokenize, Queue: res.Queued, Inference: res.Inference}, Batches: res.Batches}, nil
}

// engineStopGrace bounds the wait for running engine calls after Close's
// context ended: they were told to stop (ONNX Runtime checks between
// nodes), and the model is closed only once they have.
const engineStopGrace = 30 * time.Second

// Close drains the scheduler, then closes the model. A model is never
// closed under a running engine call (ONNX Runtime would run on freed
// memory): when ctx ends first, Close waits for the cancelled calls to
// return, up to engineStopGrace, and leaves the model open if they do not.
func (n *Neural) Close(ctx context.Context) error {
	err := n.sched.Close(ctx)
	select {
	case <-n.sched.Stopped():
	case <-time.After(engineStopGrace):
		return fmt.Errorf("closing the model: an engine call still runs %v after it was cancelled; the model is left open: %w", engineStopGrace, err)
	}
	if cerr := n.scorer.Close(); err == nil {
		err = cerr
	}
	return err
}

// PairTokens says which tokens the model scores the pair (query, doc)
// on: the ids of the whole prompt, template and truncation included
// (for /tokenize); it stops with ctx's error when ctx is done.
func (n *Neural) PairTokens(ctx context.Context, query, doc string) ([]int, error) {
	p, err := n.scorer.PromptsContext(ctx, rerank.Request{Query: query, Docs: []string{doc}})
	if err != nil {
		return nil, err
	}
	return p[0].IDs, nil
}

// TokenText returns a token's text (for /tokenize).
func (n *Neural) TokenText(id int) (string, bool) {
	if t := n.scorer.Tokenizer(); t != nil {
		return t.Token(id)
	}
	return "", false
}
