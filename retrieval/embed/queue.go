package embed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of Queue.
var (
	// ErrOverloaded marks a call refused because the queue holds too many
	// texts: retry later.
	ErrOverloaded = errors.New("embedding queue full")
	// ErrTooMany marks a call with more texts than the queue can ever hold.
	ErrTooMany = errors.New("more texts than the embedding queue holds")
	// ErrClosed marks a call after Close.
	ErrClosed = errors.New("embedding queue closed")
)

// QueueConfig bounds a Queue.
type QueueConfig struct {
	// QueueSize is the most texts waiting or being embedded at once. A
	// TryEmbed that would pass it is refused with ErrOverloaded; Embed (the
	// memory search's own writes, searches and back-fill) is never refused,
	// but its texts count, so served requests back off while it runs.
	QueueSize int
	// Workers is how many TryEmbed calls run at once; the others wait in
	// arrival order. On CPU one call already uses every intra-op thread,
	// so 1 is usual. Embed does not wait for a worker: a memory search's
	// query is never queued behind a large served batch.
	Workers int
}

// DefaultQueueConfig returns the defaults.
func DefaultQueueConfig() QueueConfig { return QueueConfig{QueueSize: 2048, Workers: 1} }

// Validate reports every problem at once.
func (c QueueConfig) Validate() error {
	var errs []error
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("embedding queue size %d: want >= 1", c.QueueSize))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("embedding workers %d: want >= 1", c.Workers))
	}
	return errors.Join(errs...)
}

// QueueObserver receives the queue's measurements (metrics); its methods
// must be cheap and safe for concurrent use.
type QueueObserver interface {
	// EmbedQueued reports the texts waiting or running after a change.
	EmbedQueued(texts int)
	// EmbedCall reports one call: its texts, how long it waited for a
	// worker, how long the model ran and its outcome.
	EmbedCall(texts int, wait, run time.Duration, err error)
}

type nopObserver struct{}

func (nopObserver) EmbedQueued(int)                                    {}
func (nopObserver) EmbedCall(int, time.Duration, time.Duration, error) {}

// Queue is the one way to an embedding model: the memory search (through
// Embed, retrieval's Embedder) and the embedding routes of the server
// (through TryEmbed) share its bound on waiting texts and its workers.
// It is safe for concurrent use.
type Queue struct {
	m     Model
	cfg   QueueConfig
	obs   QueueObserver
	slots chan struct{}

	mu     sync.Mutex
	queued int
	closed bool
}

// NewQueue puts m behind a queue; obs may be nil.
func NewQueue(m Model, cfg QueueConfig, obs QueueObserver) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = nopObserver{}
	}
	return &Queue{m: m, cfg: cfg, obs: obs, slots: make(chan struct{}, cfg.Workers)}, nil
}

// SetObserver replaces the observer (the server's metrics, registered
// after the queue is built); call it before the first embedding call.
func (q *Queue) SetObserver(obs QueueObserver) {
	if obs != nil {
		q.obs = obs
	}
}

// Config returns the queue's bounds.
func (q *Queue) Config() QueueConfig { return q.cfg }

// Dim is the size of the model's vectors (Options.Dim 0).
func (q *Queue) Dim() int { return q.m.Dim() }

// Embed meets retrieval's Embedder: it is never refused (the memory
// search's own work cannot be retried by a client) and runs at once, beside
// a served call if one runs; its texts count against QueueSize.
func (q *Queue) Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error) {
	r, err := q.run(ctx, texts, Options{Query: isQuery}, false)
	return r.Vectors, err
}

// TryEmbed embeds texts with o, refusing with ErrOverloaded when the queue
// has no room for them and ErrTooMany when it never could.
func (q *Queue) TryEmbed(ctx context.Context, texts []string, o Options) (Result, error) {
	return q.run(ctx, texts, o, true)
}

// Close refuses every later call; calls already admitted finish.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

func (q *Queue) run(ctx context.Context, texts []string, o Options, refuse bool) (Result, error) {
	n := len(texts)
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return Result{}, ErrClosed
	case refuse && n > q.cfg.QueueSize:
		q.mu.Unlock()
		return Result{}, fmt.Errorf("%w: %d texts, the queue holds %d", ErrTooMany, n, q.cfg.QueueSize)
	case refuse && q.queued+n > q.cfg.QueueSize:
		q.mu.Unlock()
		return Result{}, fmt.Errorf("%w: %d texts waiting, %d more would pass %d", ErrOverloaded, q.queued, n, q.cfg.QueueSize)
	}
	q.queued += n
	depth := q.queued
	q.mu.Unlock()
	q.obs.EmbedQueued(depth)
	defer func() {
		q.mu.Lock()
		q.queued -= n
		depth := q.queued
		q.mu.Unlock()
		q.obs.EmbedQueued(depth)
	}()
	start := time.Now()
	if refuse {
		select {
		case q.slots <- struct{}{}:
		case <-ctx.Done():
			q.obs.EmbedCall(n, time.Since(start), 0, ctx.Err())
			return Result{}, ctx.Err()
		}
		defer func() { <-q.slots }()
	}
	wait := time.Since(start)
	r, err := q.m.EmbedWith(ctx, texts, o)
	q.obs.EmbedCall(n, wait, time.Since(start)-wait, err)
	return r, err
}
