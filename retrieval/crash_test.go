package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/crashtest"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// crashText gives each memory a unique searchable term.
func crashText(id string) string {
	return "acknowledged memory " + strings.ReplaceAll(id, "-", "x") + " must survive"
}

// crashConfig keeps snapshots, saved whenever writes pause for 5ms, so
// kills land before, during and after saves, and each round's child
// starts from the snapshot its parent's check saved, while it writes.
func crashConfig(storePath string) Config {
	cfg := DefaultConfig()
	cfg.Owner.SnapshotDir = storePath + ".snapshots"
	cfg.Owner.SnapshotIdle = 5 * time.Millisecond
	cfg.Owner.SnapshotMinVectors = 1
	return cfg
}

// TestServiceCrashChild is the child of TestServiceCrash (internal/crashtest):
// it adds batches of memories through the Service (embedding included) and
// acknowledges each ID once Add has returned, until it is SIGKILLed.
func TestServiceCrashChild(t *testing.T) {
	path, round := crashtest.Child()
	if path == "" {
		t.Skip("child of TestServiceCrash only")
	}
	st, err := bolt.Open(path, bolt.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	e, err := New(st, &hashEmbedder{N: 16}, crashConfig(path))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child service:", err)
		os.Exit(2)
	}
	e.Start() // the build runs while the child writes, as in a real restart
	for i := 0; ; {
		n := 1 + i%7 // batches of 1..7
		items := make([]store.Item, n)
		for j := range items {
			id := crashtest.ID(round, i+j)
			items[j] = store.Item{Memory: memory.Memory{Namespace: "crash", ID: id, Text: crashText(id), Time: day0}}
		}
		if _, err := e.Add(context.Background(), items); err != nil {
			fmt.Fprintln(os.Stderr, "child add:", err)
			os.Exit(3)
		}
		for _, it := range items {
			crashtest.Ack(it.Memory.ID)
		}
		i += n
	}
}

// TestServiceCrash SIGKILLs the child at random moments over many rounds;
// after each, a fresh Service must find every acknowledged memory by search,
// with its vector indexed, and its indexes must agree with the store,
// whatever state the kill left the vector index snapshots in.
func TestServiceCrash(t *testing.T) {
	if path, _ := crashtest.Child(); path != "" {
		t.Skip("running as child")
	}
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := map[string]bool{}
	for round := range rounds {
		ids := crashtest.Run(t, "TestServiceCrashChild", path, round, time.Duration(20+rng.IntN(300))*time.Millisecond)
		for _, id := range ids {
			acked[id] = true
		}
		verifyService(t, path, acked)
		t.Logf("round %d: %d acknowledged, %d total, all searchable", round, len(ids), len(acked))
	}
}

func verifyService(t *testing.T, path string, acked map[string]bool) {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	e := newService(t, st, &hashEmbedder{N: 16}, crashConfig(path))
	defer e.Close()
	t.Logf("vectors from %q (%s)", e.Stats("crash").VectorSource, e.Stats("crash").SnapshotMiss)
	ctx := context.Background()
	rep, err := e.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("check after kill: %+v, %v", rep, err)
	}
	if s := e.Stats("crash"); s.Vectors != s.Indexed {
		t.Fatalf("stats after kill: %+v: every memory should have its vector", s)
	}
	for id := range acked {
		// The hash embedder's vector hits are arbitrary, so look for the
		// memory among the fused candidates with its BM25 score.
		res, err := e.Retrieve(ctx, Query{Namespace: "crash", Text: strings.ReplaceAll(id, "-", "x"), Depth: 1})
		if err != nil || res.Level != LevelHybrid {
			t.Fatalf("search for %s: %+v, %v", id, res, err)
		}
		found := false
		for _, c := range res.Candidates {
			if c.ID == id {
				found = c.Scores["bm25"] > 0 && c.Text == crashText(id)
			}
		}
		if !found {
			t.Fatalf("acknowledged %s not found by search: %v", id, candIDs(res.Candidates))
		}
	}
}
