package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

// pair is one token sequence waiting for, or riding in, an engine call.
type pair struct {
	req   *request
	seq   []int
	types []int  // seq's token type ids; nil: none (or all 0)
	idx   int    // position in the request
	order uint64 // arrival rank: lower is older
}

// cmpPair orders the queue: by length, then by age.
func cmpPair(a, b pair) int {
	if c := cmp.Compare(len(a.seq), len(b.seq)); c != 0 {
		return c
	}
	return cmp.Compare(a.order, b.order)
}

// queue holds the waiting pairs of every request, sorted by cmpPair, in a
// slice allocated once at QueueSize. Batches are contiguous windows of it
// (see plan), so taking one is a single slices.Delete.
type queue struct {
	cfg  Config
	obs  Observer
	cost CostFunc
	fits batching.Fits // the engine's own bound on a call (nil: none)
	buf  [][]int       // plan's scratch, used under mu

	mu             sync.Mutex
	pending        []pair
	next           uint64        // next arrival rank
	wake           chan struct{} // closed and replaced when workers should look again
	wakeUsed       bool          // a worker holds wake: replace it on the next signal
	closed         bool
	inFlight       int
	inFlightPairs  int
	inFlightTokens int
	// tokensPerSec is a moving average of the engine's throughput (real
	// tokens per second of engine time); 0 until the first call ends.
	tokensPerSec float64
}

func newQueue(cfg Config, obs Observer, cost CostFunc, fits batching.Fits) *queue {
	return &queue{cfg: cfg, obs: obs, cost: cost, fits: fits, pending: make([]pair, 0, cfg.QueueSize), wake: make(chan struct{})}
}

// signal wakes every waiting worker. Call with mu held.
func (q *queue) signal() {
	if q.wakeUsed {
		close(q.wake)
		q.wake = make(chan struct{})
		q.wakeUsed = false
	}
}

// waitCh returns the channel signal will close. Call with mu held.
func (q *queue) waitCh() <-chan struct{} {
	q.wakeUsed = true
	return q.wake
}

// admit queues all of seqs (with their types, nil or one per sequence)
// for r, or none of them.
func (q *queue) admit(r *request, seqs, types [][]int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if free := q.cfg.QueueSize - len(q.pending); len(seqs) > free {
		return fmt.Errorf("%w: %d pairs, %d free of %d", ErrOverloaded, len(seqs), free, q.cfg.QueueSize)
	}
	if err := q.checkDeadline(r, seqs); err != nil {
		return err
	}
	for i, seq := range seqs {
		p := pair{req: r, seq: seq, idx: i, order: q.next}
		if types != nil {
			p.types = types[i]
		}
		q.next++
		// p is the newest pair: it goes after every pair of its length.
		at, _ := slices.BinarySearchFunc(q.pending, p, cmpPair)
		q.pending = slices.Insert(q.pending, at, p)
	}
	q.obs.QueueDepth(len(q.pending))
	q.signal()
	return nil
}

// checkDeadline refuses a request that the queue ahead of it would keep
// past its deadline: a fast 429 the client can act on beats a timeout after
// the work was queued anyway. The estimate is the tokens waiting and
// running (whole batches: a conservative bound) plus the request's own,
// over the measured throughput of all workers. Call with mu held.
func (q *queue) checkDeadline(r *request, seqs [][]int) error {
	deadline, ok := r.ctx.Deadline()
	if !ok || q.tokensPerSec <= 0 {
		return nil
	}
	tokens := q.inFlightTokens
	for _, p := range q.pending {
		tokens += len(p.seq)
	}
	for _, s := range seqs {
		tokens += len(s)
	}
	wait := time.Duration(float64(tokens) / (q.tokensPerSec * float64(q.cfg.Workers)) * float64(time.Second))
	// The margin covers what the average misses: batch granularity (a
	// request's last pair may share a long batch) and throughput drift.
	if left := time.Until(deadline); float64(wait)*admitMargin > float64(left) {
		return fmt.Errorf("%w: estimated wait %v exceeds the %v left before the request's deadline",
			ErrOverloaded, wait.Round(time.Millisecond), left.Round(time.Millisecond))
	}
	return nil
}

// admitMargin inflates the estimated wait before comparing it with the
// time left: refusing a request that would just have made it costs a retry,
// admitting one that times out costs its whole wait.
const admitMargin = 1.25

// observeRate folds one engine call into the throughput average.
func (q *queue) observeRate(tokens int, d time.Duration) {
	if d <= 0 || tokens <= 0 {
		return
	}
	rate := float64(tokens) / d.Seconds()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.tokensPerSec == 0 {
		q.tokensPerSec = rate
	} else {
		q.tokensPerSec = 0.8*q.tokensPerSec + 0.2*rate
	}
}

// drop removes r's waiting pairs.
func (q *queue) drop(r *request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.pending)
	q.pending = slices.DeleteFunc(q.pending, func(p pair) bool { return p.req == r })
	if len(q.pending) != n {
		q.obs.QueueDepth(len(q.pending))
	}
}

// dropDead removes the pairs whose request has ended or been cancelled.
// Call with mu held.
func (q *queue) dropDead() {
	q.pending = slices.DeleteFunc(q.pending, func(p pair) bool { return p.req.dead() })
	q.obs.QueueDepth(len(q.pending))
}

// close stops admissions; workers drain what is queued, then exit.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.signal()
}

// clear drops every waiting pair (Close gave up draining).
func (q *queue) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.pending)
	q.pending = q.pending[:0]
	q.obs.QueueDepth(0)
	q.signal()
}

// take blocks until a batch should run, copies it into dst and returns
// it with its cost (computed tokens). It returns ok == false when the
// queue is closed and empty. A batch runs as soon as it is full, once the
// oldest waiting pair has waited MaxWait, or at once when the queue is
// closed (draining).
func (q *queue) take(dst []pair, timer *time.Timer) (batch []pair, computed int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if len(q.pending) == 0 {
			if q.closed {
				return nil, 0, false
			}
			wake := q.waitCh()
			q.mu.Unlock()
			<-wake
			q.mu.Lock()
			continue
		}
		var a, lo, hi int
		var full bool
		a, lo, hi, full, computed, q.buf = plan(q.pending, &q.cfg, q.cost, q.fits, q.buf)
		clear(q.buf) // keep no sequence alive after its pair is gone
		if slices.ContainsFunc(q.pending[lo:hi], func(p pair) bool { return p.req.dead() }) {
			q.dropDead()
			continue
		}
		wait := q.cfg.MaxWait - time.Since(q.pending[a].req.enq)
		if full || q.closed || wait <= 0 {
			dst = append(dst[:0], q.pending[lo:hi]...)
			q.pending = slices.Delete(q.pending, lo, hi)
			q.inFlight++
			q.inFlightPairs += len(dst)
			for _, p := range dst {
				q.inFlightTokens += len(p.seq)
			}
			q.obs.QueueDepth(len(q.pending))
			return dst, computed, true
		}
		wake := q.waitCh()
		q.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-wake:
			timer.Stop()
		case <-timer.C:
		}
		q.mu.Lock()
	}
}

// done records the end of a batch of n pairs (tokens in all) returned by
// take.
func (q *queue) done(n, tokens int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight--
	q.inFlightPairs -= n
	q.inFlightTokens -= tokens
}

func (q *queue) stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{Queued: len(q.pending), InFlightBatches: q.inFlight, InFlightPairs: q.inFlightPairs, Closed: q.closed}
}
