package scoring

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
)

// lateEngine is an engine call that notices its cancellation late, as ONNX
// Runtime does (it checks between nodes): Logits runs until ctx ends, then
// lag longer. Close records whether it came while a call was running.
type lateEngine struct {
	lag     time.Duration
	started chan struct{}

	mu                         sync.Mutex
	running, closed, closedRun bool
}

func (e *lateEngine) Logits(ctx context.Context, seqs, _ [][]int) ([]float32, error) {
	e.mu.Lock()
	e.running = true
	e.mu.Unlock()
	close(e.started)
	<-ctx.Done()
	time.Sleep(e.lag)
	e.mu.Lock()
	e.running = false
	e.mu.Unlock()
	return nil, ctx.Err()
}

func (e *lateEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed, e.closedRun = true, e.running
	return nil
}

// TestNeuralCloseWaitsForEngine: a shutdown whose context ends while an
// engine call runs (a slow model, a request still scoring) cancels the
// call and closes the model only once it has returned: closing an ONNX
// Runtime session under a running call crashed the process.
func TestNeuralCloseWaitsForEngine(t *testing.T) {
	eng := &lateEngine{lag: 300 * time.Millisecond, started: make(chan struct{})}
	sc, err := rerank.NewPairScorer(tokentest.FakeBERT(100), eng, rerank.DefaultScorerConfig(), rerank.PairModel{Name: "late"})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.New(eng, scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNeural("late", sc, sched, 512)
	submitted := make(chan error, 1)
	go func() {
		_, err := sched.Submit(context.Background(), [][]int{{1, 2, 3}}, nil)
		submitted <- err
	}()
	<-eng.started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := n.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want the context's deadline", err)
	}
	if d := time.Since(t0); d < eng.lag {
		t.Errorf("Close returned after %v, before the engine call did (%v)", d, eng.lag)
	}
	eng.mu.Lock()
	closed, closedRun := eng.closed, eng.closedRun
	eng.mu.Unlock()
	if !closed || closedRun {
		t.Errorf("engine closed %v, while a call ran %v", closed, closedRun)
	}
	if err := <-submitted; err == nil {
		t.Error("the cancelled request succeeded")
	}
}
