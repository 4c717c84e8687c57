package scheduler

import (
	"fmt"
	"math"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

// CostFunc returns the tokens one engine call over seqs computes. It must
// not keep or change seqs.
type CostFunc = batching.Cost

// paddedCost is the cost of engines that are not Costers: rows × longest
// row, what an engine that pads every row to the longest computes.
var paddedCost CostFunc = batching.Padded

// plan chooses the next batch from pending (sorted by length, then age):
// the window pending[lo:hi] around a, the oldest pair. buf is scratch
// space for the window's sequences (grown as needed and returned).
//
// The window starts as the oldest pair alone and grows one neighbour at a
// time: the next shorter pair or the next longer one, whichever adds fewer
// computed tokens beyond its own (for a padded engine: the padding it adds
// or causes), as long as the batch stays within MaxBatch rows, BatchTokens
// computed tokens and MaxPadRatio × real tokens, and within the engine's
// own bound when it has one (fits, nil: none). full reports that the
// batch should run without waiting for more: MaxBatch rows, or no room in
// BatchTokens or fits for another copy of its shortest row (for a padded
// engine, exactly "no pair of any length fits"; for a packed one, no pair
// like those it has). computed is the batch's cost. pending must not be
// empty.
func plan(pending []pair, cfg *Config, cost CostFunc, fits batching.Fits, buf [][]int) (a, lo, hi int, full bool, computed int, _ [][]int) {
	for i := range pending {
		if pending[i].order < pending[a].order {
			a = i
		}
	}
	// The oldest pair's request goes first, from its shortest pair
	// (pending is sorted by length): its own pairs then join in length
	// order, as batching.Plan groups them for the direct path, rather than
	// around whichever document happened to come first.
	for i := range pending {
		if pending[i].req == pending[a].req {
			a = i
			break
		}
	}
	lo, hi = a, a+1
	rows, real := 1, len(pending[a].seq)
	computed = cost([][]int{pending[a].seq})
	within := func(c, real int, seqs [][]int) bool {
		return c <= cfg.BatchTokens && float64(c) <= cfg.MaxPadRatio*float64(real) && (fits == nil || fits(seqs))
	}
	for {
		// buf holds pending[first:last]'s sequences: the window and the
		// neighbour on each side that exists.
		first, last := max(lo-1, 0), min(hi+1, len(pending))
		buf = buf[:0]
		for _, p := range pending[first:last] {
			buf = append(buf, p.seq)
		}
		win := buf[lo-first : hi-first]
		more := append(win[:len(win):len(win)], win[0])
		if rows >= cfg.MaxBatch || cost(more) > cfg.BatchTokens || fits != nil && !fits(more) {
			return a, lo, hi, true, computed, buf
		}
		pick, pickCost, waste := -1, 0, 0
		if lo > 0 {
			n := len(pending[lo-1].seq)
			if c := cost(buf[0 : hi-first]); within(c, real+n, buf[0:hi-first]) {
				pick, pickCost, waste = lo-1, c, c-computed-n
			}
		}
		if hi < len(pending) {
			n := len(pending[hi].seq)
			if c := cost(buf[lo-first : hi+1-first]); within(c, real+n, buf[lo-first:hi+1-first]) && (pick < 0 || c-computed-n < waste) {
				pick, pickCost = hi, c
			}
		}
		if pick < 0 {
			return a, lo, hi, false, computed, buf
		}
		if pick == hi {
			hi++
		} else {
			lo--
		}
		rows++
		real += len(pending[pick].seq)
		computed = pickCost
	}
}

// worker runs batches until the queue is closed and drained.
func (s *Scheduler) worker() {
	defer s.wg.Done()
	timer := newStoppedTimer()
	batch := make([]pair, 0, s.cfg.MaxBatch)
	seqs := make([][]int, 0, s.cfg.MaxBatch)
	types := make([][]int, 0, s.cfg.MaxBatch)
	for {
		var ok bool
		var computed int
		batch, computed, ok = s.q.take(batch, timer)
		if !ok {
			return
		}
		seqs, types = s.run(batch, computed, seqs[:0], types[:0])
		clear(batch) // let finished requests go
		clear(seqs)
		clear(types)
	}
}

// run passes one batch, which computes computed tokens, to the engine and
// delivers its logits. seqs and types are scratch space, returned for
// reuse.
func (s *Scheduler) run(batch []pair, computed int, seqs, types [][]int) ([][]int, [][]int) {
	id := s.batchID.Add(1)
	start := time.Now()
	real, longest := 0, 0
	first := make([]bool, 0, len(batch)) // per pair: its request's first engine call
	typed := false
	for _, p := range batch {
		seqs = append(seqs, p.seq)
		types = append(types, p.types)
		typed = typed || p.types != nil
		real += len(p.seq)
		longest = max(longest, len(p.seq))
		first = append(first, p.req.markStarted(start))
		s.obs.PairWait(start.Sub(p.req.enq))
	}
	s.obs.BatchFormed(len(batch), real, computed)
	bt := startBatchTrace(batch, first, id, start, real, computed)
	callTypes := types
	if !typed {
		callTypes = nil // a decoder's call: no types at all
	}
	logits, err := s.engine.Logits(s.engineCtx, seqs, callTypes)
	d := time.Since(start)
	bt.end(id, start, start.Add(d), err)
	s.obs.EngineCall(d, len(batch), err)
	if err == nil {
		s.q.observeRate(real, d)
	}
	switch {
	case err != nil && s.aborted():
		// Most likely the engine honouring Close's cancellation.
		err = fmt.Errorf("%w: engine call cancelled: %w", ErrClosed, err)
	case err != nil:
		err = fmt.Errorf("%w: batch of %d pairs (%d tokens, longest %d): %w", ErrEngine, len(batch), computed, longest, err)
	case len(logits) != len(batch):
		err = fmt.Errorf("%w: %d logits for %d pairs", ErrEngine, len(logits), len(batch))
	}
	for i, p := range batch {
		if err != nil {
			s.fail(p.req, err)
			continue
		}
		v := logits[i]
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			s.fail(p.req, fmt.Errorf("%w: %v for pair %d", ErrBadScore, v, p.idx))
			continue
		}
		p.req.deliver(p.idx, v, id, d)
	}
	s.q.done(len(batch), real)
	return seqs, types
}

// fail ends r with err and drops its waiting pairs: they would be wasted.
func (s *Scheduler) fail(r *request, err error) {
	if r.finish(err) {
		s.q.drop(r)
	}
}

func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// aborted reports that Close gave up draining.
func (s *Scheduler) aborted() bool {
	select {
	case <-s.abort:
		return true
	default:
		return false
	}
}
