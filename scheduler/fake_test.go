package scheduler

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

// fakeEngine scores a sequence as the sum of its ids and records every
// batch it is given. Optional hooks make it block, fail or return NaN.
type fakeEngine struct {
	// gate, if set, makes every call wait for a value (or for its ctx).
	gate chan struct{}
	// entered, if set, receives the rows of every call on entry.
	entered chan int
	// fail, if set, fails any call for which it returns an error.
	fail func(seqs [][]int) error
	// bad, if set, replaces the logit of every sequence it returns true
	// for.
	bad func(seq []int) (float32, bool)

	mu      sync.Mutex
	batches [][][]int // copies of every call's sequences
}

func sum(seq []int) float32 {
	s := 0
	for _, v := range seq {
		s += v
	}
	return float32(s)
}

func (e *fakeEngine) Logits(ctx context.Context, seqs, _ [][]int) ([]float32, error) {
	rec := make([][]int, len(seqs))
	for i, s := range seqs {
		rec[i] = slices.Clone(s)
	}
	e.mu.Lock()
	e.batches = append(e.batches, rec)
	e.mu.Unlock()
	if e.entered != nil {
		e.entered <- len(seqs)
	}
	if e.gate != nil {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if e.fail != nil {
		if err := e.fail(seqs); err != nil {
			return nil, err
		}
	}
	out := make([]float32, len(seqs))
	for i, s := range seqs {
		out[i] = sum(s)
		if e.bad != nil {
			if v, ok := e.bad(s); ok {
				out[i] = v
			}
		}
	}
	return out, nil
}

func (e *fakeEngine) recorded() [][][]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.batches)
}

// newBlocking returns an engine whose calls each wait for a release.
func newBlocking() *fakeEngine {
	return &fakeEngine{gate: make(chan struct{}), entered: make(chan int, 1000)}
}

// open lets every call, current and future, return.
func (e *fakeEngine) open() { close(e.gate) }

// seq returns a sequence of length n tagged with tag (its first id), so
// that recorded batches show which request a pair came from.
func seq(tag, n int) []int {
	s := make([]int, n)
	s[0] = tag
	for i := 1; i < n; i++ {
		s[i] = 1
	}
	return s
}

func testConfig() Config {
	c := DefaultConfig()
	c.MaxWait = 0
	return c
}

func mustNew(t testing.TB, e batching.Logiter, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Error(err)
		}
	})
	return s
}

// eventually polls cond; the deadline only catches a hang, it is not a
// timing assertion.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type outcome struct {
	res Result
	err error
}

// submitAsync submits in a goroutine and waits until the pairs are queued
// (or the call has already returned).
func submitAsync(t testing.TB, s *Scheduler, ctx context.Context, seqs [][]int) <-chan outcome {
	t.Helper()
	before := s.Stats().Queued
	ch := make(chan outcome, 1)
	go func() {
		r, err := s.Submit(ctx, seqs, nil)
		ch <- outcome{r, err}
	}()
	eventually(t, "pairs queued", func() bool { return s.Stats().Queued >= before+len(seqs) || len(ch) > 0 })
	return ch
}

// plug occupies the (single) worker with a one-pair request on a blocking
// engine, so that later submissions queue up until release.
func plug(t testing.TB, s *Scheduler, e *fakeEngine) <-chan outcome {
	t.Helper()
	return plugN(t, s, e, 1)
}

// plugN plugs with n pairs: n = MaxBatch makes a full batch, which runs
// whatever MaxWait is.
func plugN(t testing.TB, s *Scheduler, e *fakeEngine, n int) <-chan outcome {
	t.Helper()
	seqs := make([][]int, n)
	for i := range seqs {
		seqs[i] = seq(999, 1)
	}
	ch := make(chan outcome, 1)
	go func() {
		r, err := s.Submit(context.Background(), seqs, nil)
		ch <- outcome{r, err}
	}()
	<-e.entered
	return ch
}

func recv(t testing.TB, ch <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("Submit did not return")
		return outcome{}
	}
}

func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d, baseline %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
