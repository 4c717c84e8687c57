package owner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/internal/servicetest"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// gateEmbedder embeds like servicetest.HashEmbedder, but its document calls can be
// held: each one signals entered, then waits for release or ctx. fail,
// when set, decides per call (numbered from 1) whether it fails.
type gateEmbedder struct {
	servicetest.HashEmbedder
	entered chan struct{}
	release chan struct{} // nil: never hold
	n       atomic.Int64
	fail    func(call int64) error
}

func (g *gateEmbedder) Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error) {
	if isQuery {
		return g.HashEmbedder.Embed(ctx, texts, true)
	}
	call := g.n.Add(1)
	if g.entered != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
	}
	if g.release != nil {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if g.fail != nil {
		if err := g.fail(call); err != nil {
			return nil, err
		}
	}
	return g.HashEmbedder.Embed(ctx, texts, false)
}

// oldMemories fills ns with memories the back-fill must embed: without a
// vector, with a zero vector, with a vector of another dimension.
func oldMemories(t *testing.T, st *bolt.Store, ns string, n int) {
	t.Helper()
	items := make([]store.Item, n)
	for i := range items {
		items[i] = servicetest.Item(ns, fmt.Sprintf("o%03d", i), fmt.Sprintf("old memory w%d about topic t%d", i, i%5))
		switch i % 10 {
		case 1:
			items[i].Vector = make([]float32, 16) // zero
		case 2:
			items[i].Vector = vecFor(items[i].Memory.ID, 8) // another model's
		}
	}
	if err := st.PutBatch(items); err != nil {
		t.Fatal(err)
	}
}

func backfillConfig() retrieval.Config {
	cfg := retrieval.DefaultConfig()
	cfg.Owner.BackfillBatch = 7
	cfg.PageSize = 20
	return cfg
}

func waitBackfill(t *testing.T, svc *retrieval.Service) {
	t.Helper()
	select {
	case <-ownerOf(svc).Backfilled():
	case <-time.After(20 * time.Second):
		t.Fatal("back-fill did not end")
	}
}

func TestBackfillFillsOldMemories(t *testing.T) {
	st := servicetest.OpenStore(t, "")
	oldMemories(t, st, "a", 45)
	oldMemories(t, st, "b", 12)
	putVecs(t, st, "b", 3) // already have vectors: left alone
	cfg := backfillConfig()
	var mu sync.Mutex
	var last [2]int
	cfg.Progress = func(phase string, done, total int) {
		if phase == "backfill" {
			mu.Lock()
			last = [2]int{done, total}
			mu.Unlock()
		}
	}
	emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}}
	svc := newService(t, st, emb, cfg)
	waitBackfill(t, svc)
	for ns, n := range map[string]int{"a": 45, "b": 15} {
		s := svc.Stats(ns)
		if s.Vectors != n || s.BackfillFailed != 0 {
			t.Fatalf("%s: %+v, want %d vectors", ns, s, n)
		}
		if len(vectorIDs(t, st, ns, 16)) != n {
			t.Fatalf("%s: the store has %d usable vectors, want %d", ns, len(vectorIDs(t, st, ns, 16)), n)
		}
	}
	if a, b := svc.Stats("a").Backfilled, svc.Stats("b").Backfilled; a != 45 || b != 12 {
		t.Fatalf("backfilled a=%d b=%d", a, b)
	}
	mu.Lock()
	if last != [2]int{60, 60} {
		t.Errorf("last back-fill progress %v, want 60/60", last)
	}
	mu.Unlock()
	if rep, err := svc.Check(context.Background(), false); err != nil || len(rep.Disagreements) != 0 || rep.OtherDim != 0 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	res, err := svc.Retrieve(context.Background(), retrieval.Query{Namespace: "a", Text: "w17 topic"})
	if err != nil || res.Level != retrieval.LevelHybrid || res.Candidates[0].ID != "o017" {
		t.Fatalf("search: %s %v, %v", res.Level, servicetest.CandIDs(res.Candidates), err)
	}
	// A second start finds nothing left to do (the embedder sees queries only).
	calls := emb.n.Load()
	svc2 := newService(t, st, emb, cfg)
	waitBackfill(t, svc2)
	if emb.n.Load() != calls || svc2.Stats("a").Backfilled != 0 {
		t.Fatalf("second start embedded again: %d calls, %+v", emb.n.Load()-calls, svc2.Stats("a"))
	}
}

// TestBackfillKeepsNewerWrite: a memory written while its back-fill batch
// is being embedded keeps what that write stored.
func TestBackfillKeepsNewerWrite(t *testing.T) {
	own := vecFor("own", 16)
	cases := []struct {
		name  string
		write func(*retrieval.Service) error
		want  []float32 // stored vector of o000 after; nil: none / gone
		gone  bool
	}{
		{"new text with its own vector", func(svc *retrieval.Service) error {
			it := servicetest.Item("a", "o000", "rewritten")
			it.Vector = own
			_, err := svc.Add(context.Background(), []store.Item{it})
			return err
		}, own, false},
		{"same text with its own vector", func(svc *retrieval.Service) error {
			it := servicetest.Item("a", "o000", "old memory w0 about topic t0")
			it.Vector = own
			_, err := svc.Add(context.Background(), []store.Item{it})
			return err
		}, own, false},
		{"deleted", func(svc *retrieval.Service) error { return svc.Delete("a", "o000") }, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := servicetest.OpenStore(t, "")
			oldMemories(t, st, "a", 3)
			emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}, entered: make(chan struct{}, 1), release: make(chan struct{})}
			svc := newService(t, st, emb, backfillConfig())
			select {
			case <-emb.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("back-fill never called the embedder")
			}
			if err := tc.write(svc); err != nil {
				t.Fatal(err)
			}
			close(emb.release)
			waitBackfill(t, svc)
			v, err := st.Vector("a", "o000")
			switch {
			case tc.want == nil && !errors.Is(err, store.ErrNotFound):
				t.Fatalf("vector after: %v, %v; want none", v, err)
			case tc.want != nil && (err != nil || fmt.Sprint(v) != fmt.Sprint(tc.want)):
				t.Fatalf("the back-fill overwrote the newer vector: %v, %v", v, err)
			}
			sp, _ := space(svc, "a")
			if sp.Indexes().Vec.Has("o000") == tc.gone {
				t.Fatalf("index has o000: %v", !tc.gone)
			}
			if s := svc.Stats("a"); s.Backfilled != 2 {
				t.Fatalf("stats %+v: want the 2 untouched memories filled", s)
			}
			if rep, err := svc.Check(context.Background(), false); err != nil || len(rep.Disagreements) != 0 {
				t.Fatalf("check: %+v, %v", rep, err)
			}
		})
	}
}

// TestBackfillStopsOnClose: Close cancels an embedder call in progress
// and returns at once.
func TestBackfillStopsOnClose(t *testing.T) {
	st := servicetest.OpenStore(t, "")
	oldMemories(t, st, "a", 30)
	emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	svc, err := retrieval.New(st, emb, backfillConfig())
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	select {
	case <-emb.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("back-fill never called the embedder")
	}
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- svc.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return while the back-fill was embedding")
	}
	t.Logf("Close took %v", time.Since(t0))
	if s := svc.Stats("a"); s.Backfilled != 0 || s.BackfillFailed != 0 {
		t.Fatalf("a cancelled batch was counted: %+v", s)
	}
}

// TestBackfillEmbedderFailure: failed batches stay lexical, are counted
// and logged; the back-fill goes on after a failure and gives up after
// maxBackfillFails in a row.
func TestBackfillEmbedderFailure(t *testing.T) {
	boom := errors.New("model on fire")
	cases := []struct {
		name           string
		fail           func(int64) error
		filled, failed int
	}{
		{"first call fails", func(c int64) error {
			if c == 1 {
				return boom
			}
			return nil
		}, 43, 7},
		// Pages of 20 in batches of 7, 7, 6: it gives up after the first page.
		{"every call fails", func(int64) error { return boom }, 0, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := servicetest.OpenStore(t, "")
			oldMemories(t, st, "a", 50)
			var logs testenv.SyncBuffer
			cfg := backfillConfig()
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}, fail: tc.fail}
			svc := newService(t, st, emb, cfg)
			waitBackfill(t, svc)
			s := svc.Stats("a")
			if s.Backfilled != tc.filled || s.BackfillFailed != tc.failed || s.Vectors != tc.filled || s.Indexed != 50 {
				t.Fatalf("stats %+v, want %d filled, %d failed", s, tc.filled, tc.failed)
			}
			if got := len(vectorIDs(t, st, "a", 16)); got != tc.filled {
				t.Fatalf("%d stored vectors, want %d", got, tc.filled)
			}
			if !strings.Contains(logs.String(), "model on fire") {
				t.Fatalf("embedder error not logged:\n%s", logs.String())
			}
			// Still serving: lexical search finds a memory left without a vector.
			res, err := svc.Retrieve(context.Background(), retrieval.Query{Namespace: "a", Text: "w3", Mode: retrieval.ModeBM25})
			if err != nil || len(res.Candidates) == 0 || res.Candidates[0].ID != "o003" {
				t.Fatalf("search after failures: %v, %v", servicetest.CandIDs(res.Candidates), err)
			}
		})
	}
}

func TestBackfillDisabled(t *testing.T) {
	st := servicetest.OpenStore(t, "")
	oldMemories(t, st, "a", 10)
	cfg := backfillConfig()
	cfg.Owner.Backfill = false
	emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}}
	svc := newService(t, st, emb, cfg)
	waitBackfill(t, svc)
	if s := svc.Stats("a"); s.Vectors != 0 || s.Backfilled != 0 || emb.n.Load() != 0 {
		t.Fatalf("back-fill ran while disabled: %+v, %d calls", s, emb.n.Load())
	}
}

// TestBackfillThenSnapshot: the back-fill's vectors are snapshotted when
// it ends, so the next start (even after a crash) loads them.
func TestBackfillThenSnapshot(t *testing.T) {
	st := servicetest.OpenStore(t, "")
	oldMemories(t, st, "a", 30)
	cfg := backfillConfig()
	cfg.Owner.SnapshotDir, cfg.Owner.SnapshotMinVectors, cfg.Owner.SnapshotIdle = t.TempDir(), 1, 0
	emb := &gateEmbedder{HashEmbedder: servicetest.HashEmbedder{N: 16}}
	svc1 := newService(t, st, emb, cfg)
	waitBackfill(t, svc1)
	// e1 is never closed before e2 starts: a crash.
	svc2 := newService(t, st, emb, cfg)
	waitBackfill(t, svc2)
	if s := svc2.Stats("a"); s.VectorSource != "snapshot" || s.Vectors != 30 || s.Backfilled != 0 {
		t.Fatalf("after a back-fill and a crash: %+v", s)
	}
}
