package scheduler

import (
	"fmt"
	"math"
	"time"
)

// plan chooses the next batch from pending (sorted by length, then age):
// the window pending[lo:hi] around a, the oldest pair.
//
// The window starts as the oldest pair alone and grows one neighbour at a
// time: the next shorter pair (which pads itself up to the current longest
// row) or the next longer one (which pads every row already in up to its
// length), whichever wastes fewer padding tokens, as long as the batch
// stays within MaxBatch rows, BatchTokens padded tokens and MaxPadRatio.
// full reports that no pair of any length could join any more: MaxBatch
// rows, or no room in BatchTokens for one more row of the current longest
// length. pending must not be empty.
func plan(pending []pair, cfg *Config) (a, lo, hi int, full bool) {
	for i := range pending {
		if pending[i].order < pending[a].order {
			a = i
		}
	}
	lo, hi = a, a+1
	rows, longest, real := 1, len(pending[a].seq), len(pending[a].seq)
	fits := func(padded, real int) bool {
		return padded <= cfg.BatchTokens && float64(padded) <= cfg.MaxPadRatio*float64(real)
	}
	for {
		if rows >= cfg.MaxBatch || (rows+1)*longest > cfg.BatchTokens {
			return a, lo, hi, true
		}
		pick, waste := -1, 0
		if lo > 0 {
			n := len(pending[lo-1].seq)
			if fits((rows+1)*longest, real+n) {
				pick, waste = lo-1, longest-n
			}
		}
		if hi < len(pending) {
			n := len(pending[hi].seq)
			if w := (n - longest) * rows; fits((rows+1)*n, real+n) && (pick < 0 || w < waste) {
				pick = hi
			}
		}
		if pick < 0 {
			return a, lo, hi, false
		}
		n := len(pending[pick].seq)
		if pick == hi {
			hi++
			longest = n
		} else {
			lo--
		}
		rows++
		real += n
	}
}

// worker runs batches until the queue is closed and drained.
func (s *Scheduler) worker() {
	defer s.wg.Done()
	timer := newStoppedTimer()
	batch := make([]pair, 0, s.cfg.MaxBatch)
	seqs := make([][]int, 0, s.cfg.MaxBatch)
	for {
		var ok bool
		batch, ok = s.q.take(batch, timer)
		if !ok {
			return
		}
		seqs = s.run(batch, seqs[:0])
		clear(batch) // let finished requests go
		clear(seqs)
	}
}

// run passes one batch to the engine and delivers its logits. seqs is
// scratch space, returned for reuse.
func (s *Scheduler) run(batch []pair, seqs [][]int) [][]int {
	id := s.batchID.Add(1)
	start := time.Now()
	real, longest := 0, 0
	first := make([]bool, 0, len(batch)) // per pair: its request's first engine call
	for _, p := range batch {
		seqs = append(seqs, p.seq)
		real += len(p.seq)
		longest = max(longest, len(p.seq))
		first = append(first, p.req.markStarted(start))
		s.obs.PairWait(start.Sub(p.req.enq))
	}
	s.obs.BatchFormed(len(batch), real, len(batch)*longest)
	bt := startBatchTrace(batch, first, id, start, real, len(batch)*longest)
	logits, err := s.engine.Logits(s.engineCtx, seqs)
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
		err = fmt.Errorf("%w: batch of %d pairs (%d padded tokens): %w", ErrEngine, len(batch), len(batch)*longest, err)
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
	return seqs
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
