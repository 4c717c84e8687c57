package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr int // problems reported
	}{
		{"zero config reports every field", func(c *Config) { *c = Config{} }, 5},
		{"negative wait", func(c *Config) { c.MaxWait = -1 }, 1},
		{"NaN pad ratio", func(c *Config) { c.MaxPadRatio = math.NaN() }, 1},
		{"pad ratio below 1", func(c *Config) { c.MaxPadRatio = 0.5 }, 1},
		{"zero wait is fine", func(c *Config) { c.MaxWait = 0 }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			n := 0
			if err != nil {
				var j interface{ Unwrap() []error }
				if errors.As(err, &j) {
					n = len(j.Unwrap())
				}
			}
			if n != tt.wantErr {
				t.Errorf("Validate() = %v: %d problems, want %d", err, n, tt.wantErr)
			}
		})
	}
	if _, err := New(&fakeEngine{}, Config{}, nil); err == nil {
		t.Error("New accepted an invalid config")
	}
	if _, err := New(nil, DefaultConfig(), nil); err == nil {
		t.Error("New accepted a nil engine")
	}
}

func TestSubmitArguments(t *testing.T) {
	cfg := testConfig()
	cfg.QueueSize = 4
	s := mustNew(t, &fakeEngine{}, cfg)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		seqs    [][]int
		wantErr error
		want    []float32
	}{
		{"nil seqs", context.Background(), nil, nil, []float32{}},
		{"empty seqs", context.Background(), [][]int{}, nil, []float32{}},
		{"empty sequence", context.Background(), [][]int{{1}, {}}, ErrEmptySequence, nil},
		{"more pairs than the queue", context.Background(), [][]int{{1}, {1}, {1}, {1}, {1}}, ErrTooLarge, nil},
		{"context already done", done, [][]int{{1}}, context.Canceled, nil},
		{"one pair", context.Background(), [][]int{{1, 2}}, nil, []float32{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Submit(tt.ctx, tt.seqs, nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (res.Logits == nil || !slices.Equal(res.Logits, tt.want)) {
				t.Errorf("logits %v, want %v", res.Logits, tt.want)
			}
		})
	}
}

func TestResultsInInputOrderMatchAlone(t *testing.T) {
	e := &fakeEngine{}
	cfg := testConfig()
	cfg.MaxBatch = 4
	s := mustNew(t, e, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	var seqs [][]int
	for i := range 40 {
		seqs = append(seqs, seq(i+1, 1+rng.IntN(200)))
	}
	res, err := s.Submit(context.Background(), seqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, sq := range seqs {
		alone, err := e.Logits(context.Background(), [][]int{sq}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Logits[i] != alone[0] {
			t.Errorf("pair %d: %v, alone %v", i, res.Logits[i], alone[0])
		}
	}
	if res.Batches < 10 || res.Inference <= 0 || res.Queued < 0 {
		t.Errorf("timing %+v: want >= 10 batches (MaxBatch 4), positive inference", res)
	}
}

// checkBatches asserts the batching limits on every recorded batch.
func checkBatches(t *testing.T, cfg Config, batches [][][]int) {
	t.Helper()
	for i, b := range batches {
		real, longest := 0, 0
		for _, s := range b {
			real += len(s)
			longest = max(longest, len(s))
		}
		padded := len(b) * longest
		if len(b) > cfg.MaxBatch {
			t.Errorf("batch %d: %d rows > MaxBatch %d", i, len(b), cfg.MaxBatch)
		}
		if len(b) > 1 && padded > cfg.BatchTokens {
			t.Errorf("batch %d: %d padded tokens > BatchTokens %d", i, padded, cfg.BatchTokens)
		}
		if len(b) > 1 && float64(padded) > cfg.MaxPadRatio*float64(real) {
			t.Errorf("batch %d: padded %d / real %d > MaxPadRatio %v", i, padded, real, cfg.MaxPadRatio)
		}
	}
}

func TestConcurrentSubmitters(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			e := &fakeEngine{}
			cfg := DefaultConfig()
			cfg.MaxWait = time.Millisecond
			cfg.MaxBatch = 16
			cfg.BatchTokens = 2048
			cfg.Workers = workers
			s := mustNew(t, e, cfg)
			var wg sync.WaitGroup
			for g := range 50 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					for range 3 {
						seqs := make([][]int, 1+rng.IntN(20))
						for i := range seqs {
							seqs[i] = seq(rng.IntN(1000), 1+rng.IntN(300))
						}
						res, err := s.Submit(context.Background(), seqs, nil)
						if err != nil {
							t.Error(err)
							return
						}
						for i, sq := range seqs {
							if res.Logits[i] != sum(sq) {
								t.Errorf("goroutine %d pair %d: %v, want %v", g, i, res.Logits[i], sum(sq))
							}
						}
					}
				})
			}
			wg.Wait()
			checkBatches(t, cfg, e.recorded())
			// The last batch counts as in flight until its worker has
			// delivered every logit, just after the last Submit returns.
			eventually(t, "nothing queued or in flight", func() bool { return s.Stats() == Stats{} })
		})
	}
}

// tagsOf returns the request tags (first ids) in a batch.
func tagsOf(b [][]int) []int {
	var tags []int
	for _, s := range b {
		tags = append(tags, s[0])
	}
	return tags
}

func TestBatchesPoolRequests(t *testing.T) {
	e := newBlocking()
	s := mustNew(t, e, testConfig())
	p := plug(t, s, e)
	var chs []<-chan outcome
	for tag := 1; tag <= 4; tag++ {
		chs = append(chs, submitAsync(t, s, context.Background(), [][]int{seq(tag, 8), seq(tag, 8)}))
	}
	e.open()
	recv(t, p)
	for _, ch := range chs {
		if o := recv(t, ch); o.err != nil {
			t.Fatal(o.err)
		}
	}
	b := e.recorded()
	if len(b) != 2 {
		t.Fatalf("%d batches (%v), want the plug and one pooled batch", len(b), b)
	}
	tags := tagsOf(b[1])
	slices.Sort(tags)
	if want := []int{1, 1, 2, 2, 3, 3, 4, 4}; !slices.Equal(tags, want) {
		t.Errorf("pooled batch carries %v, want %v", tags, want)
	}
}

// queueAll plugs the engine, queues each request in order, lets everything
// run and returns the batches formed from the full queue (the plug's
// excluded).
func queueAll(t *testing.T, cfg Config, reqs [][][]int) [][][]int {
	t.Helper()
	e := newBlocking()
	cfg.Workers = 1
	s := mustNew(t, e, cfg)
	p := plug(t, s, e)
	var chs []<-chan outcome
	for _, r := range reqs {
		chs = append(chs, submitAsync(t, s, context.Background(), r))
	}
	e.open()
	recv(t, p)
	for i, ch := range chs {
		o := recv(t, ch)
		if o.err != nil {
			t.Fatalf("request %d: %v", i, o.err)
		}
		for j, sq := range reqs[i] {
			if o.res.Logits[j] != sum(sq) {
				t.Fatalf("request %d pair %d: %v, want %v", i, j, o.res.Logits[j], sum(sq))
			}
		}
	}
	return e.recorded()[1:]
}

func mixedWorkload(seed uint64, reqs, pairs, minLen, maxLen int) [][][]int {
	rng := rand.New(rand.NewPCG(seed, seed))
	out := make([][][]int, reqs)
	for i := range out {
		for range pairs {
			out[i] = append(out[i], seq(i+1, minLen+rng.IntN(maxLen-minLen+1)))
		}
	}
	return out
}

func TestBatchLimits(t *testing.T) {
	tests := []struct {
		name                  string
		batchTokens, maxBatch int
	}{
		{"tight budget with oversize pairs", 1000, 32},
		{"small batches", 8192, 3},
		{"both", 600, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.BatchTokens, cfg.MaxBatch = tt.batchTokens, tt.maxBatch
			reqs := mixedWorkload(3, 12, 6, 1, 1200) // some pairs exceed the budget
			batches := queueAll(t, cfg, reqs)
			checkBatches(t, cfg, batches) // oversize pairs may only run alone
			n := 0
			for _, b := range batches {
				n += len(b)
			}
			if n != 12*6 {
				t.Errorf("engine saw %d pairs, want %d", n, 12*6)
			}
		})
	}
}

// tokens counts real and padded (rows × longest row) tokens over batches.
func tokens(batches [][][]int) (real, padded int) {
	for _, b := range batches {
		longest := 0
		for _, s := range b {
			real += len(s)
			longest = max(longest, len(s))
		}
		padded += len(b) * longest
	}
	return real, padded
}

// padRatio is padded ÷ real tokens over batches.
func padRatio(batches [][][]int) float64 {
	real, padded := tokens(batches)
	return float64(padded) / float64(real)
}

// fifoBatches chunks pairs in arrival order under the same limits: the
// baseline without grouping.
func fifoBatches(cfg Config, reqs [][][]int) [][][]int {
	var out [][][]int
	var cur [][]int
	longest := 0
	for _, r := range reqs {
		for _, s := range r {
			l := max(longest, len(s))
			if len(cur) > 0 && (len(cur) == cfg.MaxBatch || (len(cur)+1)*l > cfg.BatchTokens) {
				out = append(out, cur)
				cur, l = nil, len(s)
			}
			cur = append(cur, s)
			longest = l
		}
	}
	return append(out, cur)
}

func TestGroupingCutsPadding(t *testing.T) {
	for _, ratio := range []float64{1.25, 1000} {
		t.Run(fmt.Sprintf("MaxPadRatio=%v", ratio), func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxPadRatio = ratio
			reqs := mixedWorkload(5, 30, 8, 8, 512)
			grouped := padRatio(queueAll(t, cfg, reqs))
			fifo := padRatio(fifoBatches(cfg, reqs))
			t.Logf("padded/real: grouped %.3f, FIFO %.3f", grouped, fifo)
			if grouped >= fifo || grouped > 1.25 {
				t.Errorf("grouped padding ratio %.3f, FIFO %.3f: want lower, and <= 1.25", grouped, fifo)
			}
		})
	}
}

func TestNoStarvation(t *testing.T) {
	// 10 short pairs, then one long one, then 40 more short ones, all queued
	// while the engine is busy. Shortest-first would run the long pair
	// last; the oldest-pair rule runs it as soon as the 10 older pairs are
	// done, and in any case within 10+1 batches.
	const older, newer, maxBatch = 10, 40, 4
	var reqs [][][]int
	for i := range older {
		reqs = append(reqs, [][]int{seq(i+1, 4)})
	}
	const longTag = 500
	reqs = append(reqs, [][]int{seq(longTag, 400)})
	for i := range newer {
		reqs = append(reqs, [][]int{seq(older+i+1, 4)})
	}
	cfg := testConfig()
	cfg.MaxBatch = maxBatch
	batches := queueAll(t, cfg, reqs)
	at := slices.IndexFunc(batches, func(b [][]int) bool { return slices.Contains(tagsOf(b), longTag) })
	if at < 0 {
		t.Fatal("long pair never ran")
	}
	t.Logf("long pair ran in batch %d of %d", at+1, len(batches))
	if at+1 > older+1 {
		t.Errorf("long pair ran in batch %d, want <= %d", at+1, older+1)
	}
	if at+1 > (older+maxBatch-1)/maxBatch+1 {
		t.Errorf("long pair ran in batch %d, want right after the %d older pairs", at+1, older)
	}
	if at == len(batches)-1 {
		t.Error("long pair ran last: starved by newer short pairs")
	}
}

func TestFullBatchDoesNotWait(t *testing.T) {
	cfg := testConfig()
	cfg.MaxWait = time.Hour
	cfg.MaxBatch = 4
	cfg.BatchTokens = 10
	s := mustNew(t, &fakeEngine{}, cfg)
	tests := []struct {
		name string
		seqs [][]int
	}{
		{"MaxBatch rows", [][]int{{1}, {1}, {1}, {1}}},
		{"budget full", [][]int{{1, 1, 1, 1, 1, 1}}},
		{"oversize", [][]int{seq(1, 50)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan outcome, 1)
			go func() {
				r, err := s.Submit(context.Background(), tt.seqs, nil)
				ch <- outcome{r, err}
			}()
			if o := recv(t, ch); o.err != nil {
				t.Fatal(o.err)
			}
		})
	}
}

func TestOverload(t *testing.T) {
	e := newBlocking()
	cfg := testConfig()
	cfg.QueueSize = 8
	s := mustNew(t, e, cfg)
	p := plug(t, s, e) // in flight: does not count against the queue
	a := submitAsync(t, s, context.Background(), [][]int{{1}, {1}, {1}, {1}, {1}, {1}})
	if _, err := s.Submit(context.Background(), [][]int{{2}, {2}, {2}}, nil); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("3 pairs into 2 free slots: %v, want ErrOverloaded", err)
	}
	b := submitAsync(t, s, context.Background(), [][]int{{3}, {3}})
	for range 1000 {
		if _, err := s.Submit(context.Background(), [][]int{{4}}, nil); !errors.Is(err, ErrOverloaded) {
			t.Fatalf("into a full queue: %v, want ErrOverloaded", err)
		}
	}
	if _, err := s.Submit(context.Background(), make([][]int, 9), nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("9 pairs, queue of 8: %v, want ErrTooLarge", err)
	}
	if st := s.Stats(); st.Queued != 8 || st.InFlightPairs != 1 {
		t.Errorf("stats %+v, want 8 queued, 1 in flight", st)
	}
	s.q.mu.Lock()
	capacity := cap(s.q.pending)
	s.q.mu.Unlock()
	if capacity != cfg.QueueSize {
		t.Errorf("queue capacity %d, want %d (allocated once)", capacity, cfg.QueueSize)
	}
	e.open()
	for _, ch := range []<-chan outcome{p, a, b} {
		if o := recv(t, ch); o.err != nil {
			t.Error(o.err)
		}
	}
	for _, bt := range e.recorded() {
		if slices.Contains(tagsOf(bt), 2) || slices.Contains(tagsOf(bt), 4) {
			t.Errorf("a refused request reached the engine: %v", bt)
		}
	}
}

func TestCancelWaiting(t *testing.T) {
	e := newBlocking()
	s := mustNew(t, e, testConfig())
	p := plug(t, s, e)
	ctx, cancel := context.WithCancel(context.Background())
	a := submitAsync(t, s, ctx, [][]int{seq(7, 3), seq(7, 5), seq(7, 9)})
	b := submitAsync(t, s, context.Background(), [][]int{seq(8, 3)})
	cancel()
	if o := recv(t, a); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want context.Canceled", o.err)
	}
	if n := s.Stats().Queued; n != 1 {
		t.Errorf("%d pairs queued after cancel, want 1 (the other request's)", n)
	}
	e.open()
	if o := recv(t, b); o.err != nil || o.res.Logits[0] != 10 {
		t.Errorf("other request: %v %v", o.res.Logits, o.err)
	}
	recv(t, p)
	for _, bt := range e.recorded() {
		if slices.Contains(tagsOf(bt), 7) {
			t.Errorf("pair of the cancelled request reached the engine: %v", bt)
		}
	}
}

func TestCancelRunning(t *testing.T) {
	e := newBlocking()
	s := mustNew(t, e, testConfig())
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan outcome, 1)
	go func() {
		r, err := s.Submit(ctx, [][]int{seq(1, 4)}, nil)
		ch <- outcome{r, err}
	}()
	<-e.entered
	cancel()
	if o := recv(t, ch); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", o.err)
	}
	e.open() // the running call finishes; its logit is discarded
	res, err := s.Submit(context.Background(), [][]int{seq(2, 4)}, nil)
	if err != nil || res.Logits[0] != 5 {
		t.Fatalf("next request: %v %v", res.Logits, err)
	}
}

type engineFunc func(ctx context.Context, seqs [][]int) ([]float32, error)

func (f engineFunc) Logits(ctx context.Context, seqs, _ [][]int) ([]float32, error) {
	return f(ctx, seqs)
}

func TestEngineFailure(t *testing.T) {
	errBoom := errors.New("boom")
	e := newBlocking()
	e.fail = func(seqs [][]int) error {
		if slices.Contains(tagsOf(seqs), 1) {
			return errBoom
		}
		return nil
	}
	cfg := testConfig()
	cfg.MaxBatch = 2
	s := mustNew(t, e, cfg)
	p := plug(t, s, e)
	// Same length, queued in order: batches {1, 2} and {3}.
	a := submitAsync(t, s, context.Background(), [][]int{seq(1, 3)})
	b := submitAsync(t, s, context.Background(), [][]int{seq(2, 3)})
	c := submitAsync(t, s, context.Background(), [][]int{seq(3, 3)})
	e.open()
	recv(t, p)
	for name, ch := range map[string]<-chan outcome{"a": a, "b": b} {
		if o := recv(t, ch); !errors.Is(o.err, ErrEngine) || !errors.Is(o.err, errBoom) {
			t.Errorf("request %s in the failed batch: %v, want ErrEngine wrapping boom", name, o.err)
		}
	}
	if o := recv(t, c); o.err != nil || o.res.Logits[0] != 5 {
		t.Errorf("request in another batch: %v %v", o.res.Logits, o.err)
	}

	t.Run("wrong logit count", func(t *testing.T) {
		s := mustNew(t, engineFunc(func(context.Context, [][]int) ([]float32, error) { return []float32{}, nil }), testConfig())
		if _, err := s.Submit(context.Background(), [][]int{{1}}, nil); !errors.Is(err, ErrEngine) {
			t.Errorf("got %v, want ErrEngine", err)
		}
	})
}

func TestBadScore(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			e := newBlocking()
			e.bad = func(s []int) (float32, bool) { return bad, s[0] == 1 }
			s := mustNew(t, e, testConfig())
			p := plug(t, s, e)
			a := submitAsync(t, s, context.Background(), [][]int{seq(1, 3), seq(1, 3)})
			b := submitAsync(t, s, context.Background(), [][]int{seq(2, 3)})
			e.open()
			recv(t, p)
			if o := recv(t, a); !errors.Is(o.err, ErrBadScore) {
				t.Errorf("request with the bad logit: %v, want ErrBadScore", o.err)
			}
			if o := recv(t, b); o.err != nil || o.res.Logits[0] != 4 {
				t.Errorf("request in the same batch: %v %v", o.res.Logits, o.err)
			}
			if n := len(e.recorded()); n != 2 {
				t.Errorf("%d engine calls, want 2 (plug, shared batch)", n)
			}
		})
	}
}

func TestCloseDrains(t *testing.T) {
	base := runtime.NumGoroutine()
	e := newBlocking()
	cfg := testConfig()
	cfg.MaxWait = time.Hour // draining must not wait to fill
	cfg.MaxBatch = 2
	s, err := New(e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plugN(t, s, e, cfg.MaxBatch)
	a := submitAsync(t, s, context.Background(), [][]int{seq(1, 3), seq(1, 30)})
	b := submitAsync(t, s, context.Background(), [][]int{seq(2, 3)})
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	eventually(t, "closed", func() bool { return s.Stats().Closed })
	if _, err := s.Submit(context.Background(), [][]int{{1}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit while draining: %v, want ErrClosed", err)
	}
	e.open()
	for _, ch := range []<-chan outcome{p, a, b} {
		if o := recv(t, ch); o.err != nil {
			t.Errorf("queued request: %v", o.err)
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := s.Submit(context.Background(), [][]int{{1}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	checkGoroutines(t, base)
}

func TestCloseExpired(t *testing.T) {
	base := runtime.NumGoroutine()
	e := newBlocking() // honours ctx: returns when Close cancels it
	s, err := New(e, testConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plug(t, s, e)
	a := submitAsync(t, s, context.Background(), [][]int{seq(1, 3)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: %v, want context.Canceled", err)
	}
	for name, ch := range map[string]<-chan outcome{"running": p, "queued": a} {
		if o := recv(t, ch); !errors.Is(o.err, ErrClosed) {
			t.Errorf("%s request: %v, want ErrClosed", name, o.err)
		}
	}
	if _, err := s.Submit(context.Background(), [][]int{{1}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	checkGoroutines(t, base)
	for _, bt := range e.recorded() {
		if slices.Contains(tagsOf(bt), 1) {
			t.Errorf("queued pair ran after Close gave up: %v", bt)
		}
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	cfg := DefaultConfig()
	cfg.Workers = 4
	cfg.MaxWait = time.Millisecond
	s, err := New(&fakeEngine{}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%3 == 0 {
				cancel()
			}
			_, _ = s.Submit(ctx, [][]int{seq(i+1, 10), seq(i+1, 20)}, nil)
		})
	}
	wg.Wait()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkGoroutines(t, base)
}

// countObserver records what the scheduler reports.
type countObserver struct {
	mu                       sync.Mutex
	depths                   []int
	batches, rows, pairWaits int
	calls                    int
	real, padded             int
}

func (o *countObserver) QueueDepth(n int) {
	o.mu.Lock()
	o.depths = append(o.depths, n)
	o.mu.Unlock()
}

func (o *countObserver) BatchFormed(rows, real, padded int) {
	o.mu.Lock()
	o.batches++
	o.rows += rows
	o.real += real
	o.padded += padded
	o.mu.Unlock()
}

func (o *countObserver) EngineCall(time.Duration, int, error) {
	o.mu.Lock()
	o.calls++
	o.mu.Unlock()
}

func (o *countObserver) PairWait(d time.Duration) {
	o.mu.Lock()
	o.pairWaits++
	o.mu.Unlock()
}

func TestObserver(t *testing.T) {
	obs := &countObserver{}
	e := &fakeEngine{}
	cfg := testConfig()
	cfg.MaxBatch = 3
	s, err := New(e, cfg, obs)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{seq(1, 2), seq(1, 2), seq(1, 2), seq(1, 5), seq(1, 5)}
	if _, err := s.Submit(context.Background(), seqs, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := e.recorded()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.batches != len(rec) || obs.calls != len(rec) || obs.rows != 5 || obs.pairWaits != 5 {
		t.Errorf("observer saw %d batches, %d calls, %d rows, %d waits; engine saw %d batches of 5 rows",
			obs.batches, obs.calls, obs.rows, obs.pairWaits, len(rec))
	}
	if real, padded := tokens(rec); obs.real != real || obs.padded != padded {
		t.Errorf("observer saw %d real, %d padded tokens; engine %d, %d", obs.real, obs.padded, real, padded)
	}
	if len(obs.depths) == 0 || obs.depths[0] != 5 || obs.depths[len(obs.depths)-1] != 0 {
		t.Errorf("queue depths %v: want 5 first, 0 last", obs.depths)
	}
}

// typedEngine scores a sequence as sum(ids) + 1000 × sum(types), checks
// each call's types as batching.Logiter states them, and records whether
// a call carried types at all. The first call waits on gate, if set.
type typedEngine struct {
	gate chan struct{}

	mu    sync.Mutex
	typed []bool // per call: types != nil
	bad   error
}

func (e *typedEngine) Logits(ctx context.Context, seqs, types [][]int) ([]float32, error) {
	e.mu.Lock()
	first := len(e.typed) == 0
	e.typed = append(e.typed, types != nil)
	if err := batching.CheckTypes(seqs, types); err != nil && e.bad == nil {
		e.bad = err
	}
	e.mu.Unlock()
	if first && e.gate != nil {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([]float32, len(seqs))
	for i, s := range seqs {
		out[i] = sum(s)
		if types != nil {
			out[i] += 1000 * sum(types[i])
		}
	}
	return out, nil
}

// TestTypesTravelWithTheirPairs: a cross-encoder's token types reach the
// engine beside their own pair's ids, whatever the batch they ride in (a
// typed request's pairs mixed with an untyped one's, reordered by
// length), and a call of untyped pairs only carries no types at all.
func TestTypesTravelWithTheirPairs(t *testing.T) {
	e := &typedEngine{gate: make(chan struct{})}
	cfg := testConfig()
	cfg.Workers = 1
	s := mustNew(t, e, cfg)

	// The first call holds the only worker, so that the next two requests
	// queue up and share calls.
	blocker := make(chan error, 1)
	go func() {
		_, err := s.Submit(context.Background(), [][]int{{9, 9}}, nil)
		blocker <- err
	}()
	for {
		e.mu.Lock()
		n := len(e.typed)
		e.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}

	typedSeqs := [][]int{{1, 2, 3, 4}, {5, 6}, {7, 8, 9}}
	typedTypes := [][]int{{0, 0, 1, 1}, nil, {0, 1, 1}}
	plainSeqs := [][]int{{2, 2, 2}, {3, 3, 3, 3}}
	type result struct {
		logits []float32
		err    error
	}
	typedRes, plainRes := make(chan result, 1), make(chan result, 1)
	go func() {
		r, err := s.Submit(context.Background(), typedSeqs, typedTypes)
		typedRes <- result{r.Logits, err}
	}()
	go func() {
		r, err := s.Submit(context.Background(), plainSeqs, nil)
		plainRes <- result{r.Logits, err}
	}()
	for {
		s.q.mu.Lock()
		n := len(s.q.pending)
		s.q.mu.Unlock()
		if n == len(typedSeqs)+len(plainSeqs) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(e.gate)
	if err := <-blocker; err != nil {
		t.Fatal(err)
	}
	check := func(name string, r result, seqs, types [][]int) {
		t.Helper()
		if r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
		for i, sq := range seqs {
			want := sum(sq)
			if types != nil {
				want += 1000 * sum(types[i])
			}
			if r.logits[i] != want {
				t.Errorf("%s pair %d: logit %v, want %v", name, i, r.logits[i], want)
			}
		}
	}
	check("typed", <-typedRes, typedSeqs, typedTypes)
	check("plain", <-plainRes, plainSeqs, nil)

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bad != nil {
		t.Errorf("an engine call's types did not fit its sequences: %v", e.bad)
	}
	if e.typed[0] {
		t.Errorf("the untyped blocker's call carried types")
	}
	if !slices.Contains(e.typed[1:], true) {
		t.Errorf("no call carried the typed request's types: %v", e.typed)
	}
}

func TestSubmitRefusesTypesThatDoNotFit(t *testing.T) {
	s := mustNew(t, &typedEngine{}, testConfig())
	for _, tt := range []struct {
		name  string
		seqs  [][]int
		types [][]int
	}{
		{"fewer rows", [][]int{{1, 2}, {3}}, [][]int{{0, 1}}},
		{"shorter row", [][]int{{1, 2}, {3}}, [][]int{{0, 1}, {}}},
		{"longer row", [][]int{{1, 2}}, [][]int{{0, 1, 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Submit(context.Background(), tt.seqs, tt.types); err == nil {
				t.Errorf("Submit accepted %d type rows %v for %v", len(tt.types), tt.types, tt.seqs)
			}
		})
	}
}
