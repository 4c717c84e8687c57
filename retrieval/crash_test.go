package retrieval

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

const (
	engineCrashPath  = "RERANKD_ENGINE_CRASH_PATH"
	engineCrashRound = "RERANKD_ENGINE_CRASH_ROUND"
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

// TestEngineCrashChild is the child of TestEngineCrash: it adds batches of
// memories through the Service (embedding included) and prints each ID once
// Add has returned, until it is SIGKILLed.
func TestEngineCrashChild(t *testing.T) {
	path := os.Getenv(engineCrashPath)
	if path == "" {
		t.Skip("child of TestEngineCrash only")
	}
	st, err := bolt.Open(path, bolt.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	e, err := New(st, &hashEmbedder{N: 16}, crashConfig(path))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child engine:", err)
		os.Exit(2)
	}
	e.Start() // the build runs while the child writes, as in a real restart
	round := os.Getenv(engineCrashRound)
	for i := 0; ; {
		n := 1 + i%7 // batches of 1..7
		items := make([]store.Item, n)
		for j := range items {
			id := fmt.Sprintf("r%s-%06d", round, i+j)
			items[j] = store.Item{Memory: memory.Memory{Namespace: "crash", ID: id, Text: crashText(id), Time: day0}}
		}
		if _, err := e.Add(context.Background(), items); err != nil {
			fmt.Fprintln(os.Stderr, "child add:", err)
			os.Exit(3)
		}
		for _, it := range items {
			fmt.Fprintln(os.Stdout, it.Memory.ID)
		}
		i += n
	}
}

// TestEngineCrash SIGKILLs the child at random moments over many rounds;
// after each, a fresh engine must find every acknowledged memory by search,
// with its vector indexed, and its indexes must agree with the store,
// whatever state the kill left the vector index snapshots in.
func TestEngineCrash(t *testing.T) {
	if os.Getenv(engineCrashPath) != "" {
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
		ids := runEngineChild(t, path, round, time.Duration(20+rng.IntN(300))*time.Millisecond)
		for _, id := range ids {
			acked[id] = true
		}
		verifyEngine(t, path, acked)
		t.Logf("round %d: %d acknowledged, %d total, all searchable", round, len(ids), len(acked))
	}
}

func runEngineChild(t *testing.T, path string, round int, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEngineCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), engineCrashPath+"="+path, fmt.Sprintf("%s=%d", engineCrashRound, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4096)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ids []string
	select {
	case id, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("child exited before its first ack: %s", stderr.String())
		}
		ids = append(ids, id)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("child made no progress: %s", stderr.String())
	}
	kill := time.After(delay)
loop:
	for {
		select {
		case id, ok := <-lines:
			if !ok {
				break loop
			}
			ids = append(ids, id)
		case <-kill:
			_ = cmd.Process.Kill()
			kill = nil
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("child exited cleanly: %s", stderr.String())
	}
	want := len(fmt.Sprintf("r%d-000000", round))
	for i, id := range ids {
		if len(id) != want || !strings.HasPrefix(id, fmt.Sprintf("r%d-", round)) {
			ids = ids[:i] // a torn last line
			break
		}
	}
	return ids
}

func verifyEngine(t *testing.T, path string, acked map[string]bool) {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	e := newEngine(t, st, &hashEmbedder{N: 16}, crashConfig(path))
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
