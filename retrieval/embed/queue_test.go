package embed

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gateModel answers once its gate opens, counting concurrent calls.
type gateModel struct {
	gate    chan struct{}
	running atomic.Int32
	most    atomic.Int32
	mu      sync.Mutex
	got     []Options
}

func (m *gateModel) Dim() int { return 2 }

func (m *gateModel) EmbedWith(ctx context.Context, texts []string, o Options) (Result, error) {
	n := m.running.Add(1)
	defer m.running.Add(-1)
	for {
		old := m.most.Load()
		if n <= old || m.most.CompareAndSwap(old, n) {
			break
		}
	}
	m.mu.Lock()
	m.got = append(m.got, o)
	m.mu.Unlock()
	select {
	case <-m.gate:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	r := Result{}
	for range texts {
		r.Vectors = append(r.Vectors, []float32{1, 0})
		r.Tokens = append(r.Tokens, 1)
	}
	return r, nil
}

func TestQueueConfigValidate(t *testing.T) {
	err := QueueConfig{}.Validate()
	if err == nil {
		t.Fatal("zero config accepted")
	}
	for _, want := range []string{"queue size 0", "workers 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := DefaultQueueConfig().Validate(); err != nil {
		t.Error(err)
	}
}

// TestQueueBounds: TryEmbed is refused when the waiting texts would pass
// the bound (ErrOverloaded) or never fit (ErrTooMany); Embed is not
// refused and does not wait for the worker, but its texts count; one
// worker runs one TryEmbed at a time; Close refuses later calls.
func TestQueueBounds(t *testing.T) {
	m := &gateModel{gate: make(chan struct{})}
	q, err := NewQueue(m, QueueConfig{QueueSize: 3, Workers: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first := make(chan error, 1)
	go func() { _, err := q.TryEmbed(ctx, []string{"a", "b"}, Options{Query: true}); first <- err }()
	for m.running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := q.TryEmbed(ctx, []string{"c", "d"}, Options{}); !errors.Is(err, ErrOverloaded) {
		t.Errorf("2 + 2 texts in a queue of 3: %v, want ErrOverloaded", err)
	}
	if _, err := q.TryEmbed(ctx, []string{"a", "b", "c", "d"}, Options{}); !errors.Is(err, ErrTooMany) {
		t.Errorf("4 texts, queue of 3: %v, want ErrTooMany", err)
	}
	// A TryEmbed that fits waits for the worker.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if _, err := q.TryEmbed(cctx, []string{"z"}, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second TryEmbed beside a running one, one worker: %v, want it to wait", err)
	}
	cancel()
	// The memory search's own call is not refused, runs beside the served
	// one, and counts: now nothing fits.
	waited := make(chan error, 1)
	go func() { _, err := q.Embed(ctx, []string{"x", "y"}, false); waited <- err }()
	for m.running.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	if _, err := q.TryEmbed(ctx, []string{"z"}, Options{}); !errors.Is(err, ErrOverloaded) {
		t.Errorf("4 texts queued of 3: %v, want ErrOverloaded", err)
	}
	close(m.gate)
	if err := <-first; err != nil {
		t.Error(err)
	}
	if err := <-waited; err != nil {
		t.Error(err)
	}
	if m.most.Load() != 2 {
		t.Errorf("%d calls ran at once; want the served one and the memory search's", m.most.Load())
	}
	if len(m.got) != 2 || !m.got[0].Query || m.got[1].Query {
		t.Errorf("options reaching the model %+v: want the first as a query and Embed(isQuery=false)'s not", m.got)
	}
	q.Close()
	if _, err := q.TryEmbed(ctx, []string{"a"}, Options{}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}
