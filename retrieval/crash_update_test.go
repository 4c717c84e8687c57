package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/crashtest"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// TestUpdateForgetCrashChild is the child of TestUpdateForgetCrash: for
// i = 0, 1, ... it adds two memories to namespace ID(round, i), updates
// one's text and acknowledges ID(round, 2i); every third namespace it then
// forgets whole and acknowledges ID(round, 2i+1); until SIGKILLed.
func TestUpdateForgetCrashChild(t *testing.T) {
	path, round := crashtest.Child()
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
		fmt.Fprintln(os.Stderr, "child service:", err)
		os.Exit(2)
	}
	e.Start()
	updateForgetLoop(e, round)
}

// updateForgetLoop is the children's loop (TestUpdateForgetCrashChild's
// doc), until the process is killed.
func updateForgetLoop(e *Service, round string) {
	ctx := context.Background()
	for i := 0; ; i++ {
		ns := crashtest.ID(round, i)
		if _, err := e.Add(ctx, []store.Item{item(ns, "a", "original text"), item(ns, "b", "other text")}); err != nil {
			fmt.Fprintln(os.Stderr, "child add:", err)
			os.Exit(3)
		}
		text := updatedText(ns)
		if _, err := e.Update(ctx, ns, "a", Patch{Text: &text}); err != nil {
			fmt.Fprintln(os.Stderr, "child update:", err)
			os.Exit(3)
		}
		crashtest.Ack(crashtest.ID(round, 2*i))
		if i%3 == 0 {
			if _, err := e.Forget(ns); err != nil {
				fmt.Fprintln(os.Stderr, "child forget:", err)
				os.Exit(3)
			}
			crashtest.Ack(crashtest.ID(round, 2*i+1))
		}
	}
}

func updatedText(ns string) string { return "updated text " + strings.ReplaceAll(ns, "-", "x") }

// TestUpdateForgetCrash SIGKILLs the child at random moments; after each
// kill every acknowledged update is what the store holds and what search
// finds, and every acknowledged forget left nothing, in the store or the
// indexes (snapshots included).
func TestUpdateForgetCrash(t *testing.T) {
	if arg, _ := crashtest.Child(); arg != "" {
		t.Skip("running as child")
	}
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	path := filepath.Join(t.TempDir(), "crash.db")
	// mayGo holds the namespaces the child forgets next (i%3 == 0): a
	// kill between the forget's commit and its acknowledgement leaves
	// them legitimately empty.
	updated, forgot, mayGo := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for round := range rounds {
		recordUpdateForgetAcks(t, round, crashtest.Run(t, "TestUpdateForgetCrashChild", path, round, time.Duration(50+rng.IntN(400))*time.Millisecond), updated, forgot, mayGo)
		verifyUpdateForget(t, path, updated, forgot, mayGo)
		t.Logf("round %d: %d updates, %d forgets acknowledged so far, all held", round, len(updated), len(forgot))
	}
	if len(updated) == 0 || len(forgot) == 0 {
		t.Fatalf("the child acknowledged %d updates and %d forgets: nothing was tested", len(updated), len(forgot))
	}
}

// recordUpdateForgetAcks adds a round's acknowledgements (the child's
// IDs: 2i for namespace i's update, 2i+1 for its forget) to what must
// hold after the kill.
func recordUpdateForgetAcks(t *testing.T, round int, acks []string, updated, forgot, mayGo map[string]bool) {
	t.Helper()
	tag := strconv.Itoa(round)
	for _, id := range acks {
		n, err := strconv.Atoi(id[strings.IndexByte(id, '-')+1:])
		if err != nil {
			t.Fatalf("ack %q", id)
		}
		ns := crashtest.ID(tag, n/2)
		if n%2 == 0 {
			updated[ns] = true
			mayGo[ns] = (n/2)%3 == 0
		} else {
			forgot[ns] = true
		}
	}
}

func verifyUpdateForget(t *testing.T, path string, updated, forgot, mayGo map[string]bool) {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	e := newService(t, st, &hashEmbedder{N: 16}, crashConfig(path))
	defer e.Close()
	if rep, err := e.Check(context.Background(), false); err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("check after kill: %+v, %v", rep, err)
	}
	checkUpdateForget(t, e, st, updated, forgot, mayGo)
}

// checkUpdateForget checks, with a fresh engine e over the store st the
// child wrote, that every acknowledged update holds and every
// acknowledged forget left nothing found (mayGo: see
// TestUpdateForgetCrash).
func checkUpdateForget(t *testing.T, e *Service, st Store, updated, forgot, mayGo map[string]bool) {
	t.Helper()
	ctx := context.Background()
	for ns := range updated {
		if forgot[ns] {
			continue
		}
		if n, err := st.Count(ns); err == nil && n == 0 && mayGo[ns] {
			continue // forgotten whole, not yet acknowledged when killed
		}
		rec, err := e.Get(ns, "a")
		if err != nil || rec.Memory.Text != updatedText(ns) || rec.Vector == nil {
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
