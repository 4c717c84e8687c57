package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeadlineAdmission: with a known throughput, a request whose estimated
// wait exceeds its deadline is refused at once with ErrOverloaded; the same
// request without a deadline, or with a far one, is admitted.
func TestDeadlineAdmission(t *testing.T) {
	e := newBlocking()
	s := mustNew(t, e, testConfig())
	defer e.open()
	plug(t, s, e)                                          // the worker is busy: admitted pairs stay queued
	s.q.observeRate(1000, time.Second)                     // 1000 tokens/s
	seqs := [][]int{seq(1, 500), seq(2, 500), seq(3, 500)} // 1.5 s of work
	cases := []struct {
		name    string
		timeout time.Duration // 0: no deadline
		refused bool
	}{
		{"deadline too close", 100 * time.Millisecond, true},
		{"deadline far enough", time.Minute, false},
		{"no deadline", 0, false},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		if c.timeout > 0 {
			ctx, cancel = context.WithTimeout(context.Background(), c.timeout)
		}
		start := time.Now()
		ch := submitAsync(t, s, ctx, seqs)
		if c.refused {
			out := recv(t, ch)
			if !errors.Is(out.err, ErrOverloaded) {
				t.Errorf("%s: err %v, want ErrOverloaded", c.name, out.err)
			}
			if time.Since(start) > c.timeout {
				t.Errorf("%s: refusal took %v, should be immediate", c.name, time.Since(start))
			}
		} else if s.Stats().Queued < len(seqs) {
			t.Errorf("%s: not admitted (queued %d)", c.name, s.Stats().Queued)
		}
		cancel()
		if !c.refused {
			if out := recv(t, ch); !errors.Is(out.err, context.Canceled) {
				t.Errorf("%s: after cancel: %v", c.name, out.err)
			}
			eventually(t, "queue empty", func() bool { return s.Stats().Queued == 0 })
		}
	}
}
