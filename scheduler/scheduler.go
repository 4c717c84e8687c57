package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

// Errors returned by Submit and Close. Test them with errors.Is: most come
// wrapped with detail.
var (
	// ErrOverloaded: the queue has no room for all of the request's pairs
	// right now. Retry later (HTTP 503/429).
	ErrOverloaded = errors.New("scheduler: queue full")
	// ErrTooLarge: the request has more pairs than the queue can ever hold.
	// Retrying cannot help (HTTP 413).
	ErrTooLarge = errors.New("scheduler: request larger than the queue")
	// ErrClosed: the scheduler is closed, or was closed before the request
	// finished.
	ErrClosed = errors.New("scheduler: closed")
	// ErrEmptySequence: a request contains an empty token sequence.
	ErrEmptySequence = errors.New("scheduler: empty token sequence")
	// ErrEngine: the engine call that carried one of the request's pairs
	// failed; the engine's own error is wrapped too.
	ErrEngine = errors.New("scheduler: engine failed")
	// ErrBadScore: the engine returned NaN or ±Inf for one of the request's
	// pairs. It is never passed on as a score.
	ErrBadScore = errors.New("scheduler: engine returned a non-finite logit")
)

// Observer receives load events, for metrics. Every method must be fast and
// must not call back into the Scheduler; QueueDepth is called with the
// queue's lock held, so that successive depths arrive in order.
type Observer interface {
	// QueueDepth reports the pairs waiting, after every change.
	QueueDepth(pairs int)
	// BatchFormed reports a batch about to be passed to the engine: its
	// rows, its real tokens and the tokens the engine computes for it (its
	// Cost; rows × longest row for an engine that pads).
	BatchFormed(rows, realTokens, computedTokens int)
	// EngineCall reports one engine call's wall time and its error (nil on
	// success).
	EngineCall(d time.Duration, rows int, err error)
	// PairWait reports, once per pair that reaches the engine, the time
	// from Submit to the start of the engine call that carries it.
	PairWait(d time.Duration)
}

type nopObserver struct{}

func (nopObserver) QueueDepth(int)                       {}
func (nopObserver) BatchFormed(int, int, int)            {}
func (nopObserver) EngineCall(time.Duration, int, error) {}
func (nopObserver) PairWait(time.Duration)               {}

// Result is one request's outcome.
type Result struct {
	// Logits are in input order.
	Logits []float32
	// Queued is the time from Submit to the start of the first engine call
	// that carried one of the request's pairs.
	Queued time.Duration
	// Inference is the summed wall time of the distinct engine calls that
	// carried the request's pairs (a call counts once however many of its
	// pairs it carried). Those calls also carried other requests' pairs,
	// and with Workers > 1 they may overlap, so this is the engine time
	// spent on the request's behalf, not its latency.
	Inference time.Duration
	// Batches is the number of engine calls that carried its pairs.
	Batches int
}

// Stats is a snapshot of the scheduler's load.
type Stats struct {
	Queued          int  // pairs waiting for the engine
	InFlightBatches int  // engine calls running
	InFlightPairs   int  // pairs in those calls
	Closed          bool // Close has been called
}

// Scheduler pools the pairs of concurrent requests into length-grouped
// batches under a token budget and runs them on an engine. Safe for
// concurrent use.
type Scheduler struct {
	engine    batching.Logiter
	cfg       Config
	obs       Observer
	q         *queue
	engineCtx context.Context
	cancel    context.CancelFunc
	batchID   atomic.Uint64
	wg        sync.WaitGroup
	stopped   chan struct{} // closed when every worker has returned
	abort     chan struct{} // closed when Close gives up draining
	abortOnce sync.Once
}

// New starts cfg.Workers workers over engine: batching.Logiter, the one
// declaration of an engine call (the rerank.Engine implementations satisfy
// it); an engine that is also a batching.Coster has its batches budgeted by
// its Cost, and one that is a batching.CallBounder has them kept within its
// CallFits. obs may be nil.
func New(engine batching.Logiter, cfg Config, obs Observer) (*Scheduler, error) {
	if engine == nil {
		return nil, errors.New("scheduler: nil engine")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = nopObserver{}
	}
	cost := paddedCost
	if c, ok := engine.(batching.Coster); ok {
		cost = c.Cost
	}
	fits := batching.FitsOf(engine)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		engine:    engine,
		cfg:       cfg,
		obs:       obs,
		q:         newQueue(cfg, obs, cost, fits),
		engineCtx: ctx,
		cancel:    cancel,
		stopped:   make(chan struct{}),
		abort:     make(chan struct{}),
	}
	s.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go s.worker()
	}
	go func() {
		s.wg.Wait()
		cancel()
		close(s.stopped)
	}()
	return s, nil
}

// Submit queues every pair of one request at once and waits for all of
// their logits. It never blocks on a full queue: it returns ErrOverloaded
// at once, or ErrTooLarge when len(seqs) > QueueSize. If ctx ends first it
// returns ctx.Err() and the request's pairs that have not reached the
// engine are dropped; those already in a running call finish and are
// discarded.
//
// types carries a cross-encoder's token type ids beside seqs, as the
// engine's Logits takes them (nil for a decoder's sequences); the
// scheduler passes each pair's types along with it and plans on the ids'
// lengths alone.
//
// Submit does not copy seqs or types: treat them as immutable, since the
// engine may still read a pair after a cancelled Submit has returned.
func (s *Scheduler) Submit(ctx context.Context, seqs, types [][]int) (Result, error) {
	if len(seqs) > s.cfg.QueueSize {
		return Result{}, fmt.Errorf("%w: %d pairs, queue holds %d", ErrTooLarge, len(seqs), s.cfg.QueueSize)
	}
	for i, seq := range seqs {
		if len(seq) == 0 {
			return Result{}, fmt.Errorf("%w: pair %d", ErrEmptySequence, i)
		}
	}
	if err := batching.CheckTypes(seqs, types); err != nil {
		return Result{}, err
	}
	if len(seqs) == 0 {
		return Result{Logits: []float32{}}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	r := &request{
		ctx:    ctx,
		enq:    time.Now(),
		done:   make(chan struct{}),
		logits: make([]float32, len(seqs)),
		left:   len(seqs),
	}
	if err := s.q.admit(r, seqs, types); err != nil {
		return Result{}, err
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.finish(ctx.Err()) {
			s.q.drop(r)
			return Result{}, ctx.Err()
		}
	case <-s.abort:
		if r.finish(fmt.Errorf("%w: before the request finished", ErrClosed)) {
			return Result{}, r.err
		}
	}
	// r.done is closed: r is final.
	if r.err != nil {
		return Result{}, r.err
	}
	return Result{Logits: r.logits, Queued: r.started.Sub(r.enq), Inference: r.inference, Batches: r.batches}, nil
}

// Close stops accepting requests (Submit returns ErrClosed), lets the
// workers finish every queued and running pair, and returns nil once they
// have. If ctx ends first, Close fails every unfinished request with
// ErrClosed, drops the queue, cancels the context passed to running engine
// calls and returns ctx.Err() without waiting for them: their workers exit
// as soon as the engine returns. Close may be called more than once.
func (s *Scheduler) Close(ctx context.Context) error {
	s.q.close()
	select {
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		s.abortOnce.Do(func() {
			close(s.abort)
			s.q.clear()
			s.cancel()
		})
		return ctx.Err()
	}
}

// Stopped is closed once every worker has returned: no engine call of
// this scheduler is running. Only then may the engine be closed.
func (s *Scheduler) Stopped() <-chan struct{} { return s.stopped }

// Stats returns a snapshot of the load.
func (s *Scheduler) Stats() Stats { return s.q.stats() }

// request is one Submit call. Its result fields are written under mu and
// are final once done is closed.
type request struct {
	ctx      context.Context
	enq      time.Time
	done     chan struct{}
	finished atomic.Bool // mirrors done, readable without mu

	mu        sync.Mutex
	logits    []float32
	left      int // pairs not yet delivered
	err       error
	started   time.Time // start of the first engine call that carried a pair
	inference time.Duration
	batches   int
	lastBatch uint64 // id of the last engine call counted in inference
}

// finish ends r with err unless it has already ended; it reports whether
// this call ended it.
func (r *request) finish(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished.Load() {
		return false
	}
	r.err = err
	r.finished.Store(true)
	close(r.done)
	return true
}

// dead reports that r's pairs need not be computed.
func (r *request) dead() bool { return r.finished.Load() || r.ctx.Err() != nil }

// markStarted records the start of an engine call carrying one of r's
// pairs; it reports whether that call is r's first.
func (r *request) markStarted(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started.IsZero() {
		r.started = t
		return true
	}
	return r.started.Equal(t)
}

// deliver records pair idx's logit, computed by engine call batch of
// duration d, and ends r after its last pair.
func (r *request) deliver(idx int, v float32, batch uint64, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished.Load() {
		return
	}
	r.logits[idx] = v
	if r.lastBatch != batch {
		r.lastBatch = batch
		r.inference += d
		r.batches++
	}
	r.left--
	if r.left == 0 {
		r.finished.Store(true)
		close(r.done)
	}
}
