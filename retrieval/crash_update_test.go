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

	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

const updateCrashPath = "RERANKD_UPDATE_CRASH_PATH"

// TestUpdateForgetCrashChild is the child of TestUpdateForgetCrash: in
// namespaces of its own it adds a memory, updates its text ("U ns id"
// once acknowledged) and every third namespace forgets it whole ("F ns"),
// until it is SIGKILLed.
func TestUpdateForgetCrashChild(t *testing.T) {
	path := os.Getenv(updateCrashPath)
	if path == "" {
		t.Skip("child of TestUpdateForgetCrash only")
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
	e.Start()
	ctx := context.Background()
	prefix := os.Getenv("RERANKD_UPDATE_CRASH_ROUND")
	for i := 0; ; i++ {
		ns := fmt.Sprintf("u%s-%05d", prefix, i)
		if _, err := e.Add(ctx, []store.Item{item(ns, "a", "original text"), item(ns, "b", "other text")}); err != nil {
			fmt.Fprintln(os.Stderr, "child add:", err)
			os.Exit(3)
		}
		text := "updated text " + strings.ReplaceAll(ns, "-", "x")
		if _, err := e.Update(ctx, ns, "a", Patch{Text: &text}); err != nil {
			fmt.Fprintln(os.Stderr, "child update:", err)
			os.Exit(3)
		}
		fmt.Println("U", ns)
		if i%3 == 0 {
			if _, err := e.Forget(ns); err != nil {
				fmt.Fprintln(os.Stderr, "child forget:", err)
				os.Exit(3)
			}
			fmt.Println("F", ns)
		}
	}
}

// TestUpdateForgetCrash SIGKILLs the child at random moments; after each
// kill every acknowledged update is what the store holds and what search
// finds, and every acknowledged forget left nothing, in the store or the
// indexes (snapshots included).
func TestUpdateForgetCrash(t *testing.T) {
	if os.Getenv(updateCrashPath) != "" {
		t.Skip("running as child")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	path := filepath.Join(t.TempDir(), "crash.db")
	updated, forgot := map[string]bool{}, map[string]bool{}
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUpdateForgetCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), updateCrashPath+"="+path, fmt.Sprintf("RERANKD_UPDATE_CRASH_ROUND=%d", round))
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
		var kill <-chan time.Time // armed at the first acknowledgement
		delay := time.Duration(50+rng.IntN(400)) * time.Millisecond
		armed := false
		deadline := time.After(30 * time.Second)
	loop:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break loop
				}
				if !armed {
					kill, armed = time.After(delay), true
				}
				if k, ns, ok := strings.Cut(l, " "); ok && strings.HasPrefix(ns, fmt.Sprintf("u%d-", round)) && len(ns) == len(fmt.Sprintf("u%d-00000", round)) {
					switch k {
					case "U":
						updated[ns] = true
					case "F":
						forgot[ns] = true
					}
				}
			case <-kill:
				_ = cmd.Process.Kill()
				kill = nil
			case <-deadline:
				_ = cmd.Process.Kill()
				t.Fatalf("child stuck: %s", stderr.String())
			}
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("child exited cleanly: %s", stderr.String())
		}
		verifyUpdateForget(t, path, updated, forgot)
		t.Logf("round %d: %d updates, %d forgets acknowledged so far, all held", round, len(updated), len(forgot))
	}
	if len(updated) == 0 || len(forgot) == 0 {
		t.Fatalf("the child acknowledged %d updates and %d forgets: nothing was tested", len(updated), len(forgot))
	}
}

func verifyUpdateForget(t *testing.T, path string, updated, forgot map[string]bool) {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	e := newEngine(t, st, &hashEmbedder{N: 16}, crashConfig(path))
	defer e.Close()
	ctx := context.Background()
	if rep, err := e.Check(ctx, false); err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("check after kill: %+v, %v", rep, err)
	}
	for ns := range updated {
		if forgot[ns] {
			continue
		}
		want := "updated text " + strings.ReplaceAll(ns, "-", "x")
		rec, err := e.Get(ns, "a")
		if err != nil || rec.Memory.Text != want || rec.Vector == nil {
			t.Fatalf("%s/a after kill: %q (vector %v), %v; want the acknowledged update", ns, rec.Memory.Text, rec.Vector != nil, err)
		}
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: ns, Text: "original", Mode: ModeBM25}})
		if err != nil || len(res.Results) != 0 {
			t.Fatalf("%s: the old text is still found: %v %v", ns, candIDs(res.Results), err)
		}
	}
	for ns := range forgot {
		if n, err := st.Count(ns); err != nil || n != 0 {
			t.Fatalf("forgotten %s holds %d memories after kill (%v)", ns, n, err)
		}
		res, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: ns, Text: "text"}})
		if err != nil || len(res.Results) != 0 {
			t.Fatalf("forgotten %s still found: %v %v", ns, candIDs(res.Results), err)
		}
	}
}
