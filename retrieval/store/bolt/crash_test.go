package bolt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/crashtest"
	"github.com/rerankd/rerankd/retrieval/store"
)

const crashDim = 32

// TestCrashChild is the child half of TestCrashDurability (internal/crashtest):
// it writes memories forever, acknowledging each ID after Put (durable)
// returns, until the parent SIGKILLs it.
func TestCrashChild(t *testing.T) {
	path, round := crashtest.Child()
	if path == "" {
		t.Skip("child of TestCrashDurability only")
	}
	s, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		id := crashtest.ID(round, i)
		if i%5 == 4 { // exercise multi-item transactions too
			batch := []store.Item{{Memory: mem("crash", id), Vector: vec(i, crashDim)}, {Memory: mem("crash:b", id)}}
			err = s.PutBatch(batch)
		} else {
			err = s.Put(mem("crash", id), vec(i, crashDim))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child put:", err)
			os.Exit(3)
		}
		crashtest.Ack(id)
	}
}

// TestCrashDurability SIGKILLs a writer at random moments and checks that
// every write it acknowledged survives and the file stays consistent.
func TestCrashDurability(t *testing.T) {
	if path, _ := crashtest.Child(); path != "" {
		t.Skip("running as child")
	}
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := map[string]bool{}
	for round := range rounds {
		ids := crashtest.Run(t, "TestCrashChild", path, round, time.Duration(20+rng.IntN(300))*time.Millisecond)
		for _, id := range ids {
			acked[id] = true
		}
		verifyCrash(t, path, acked)
		t.Logf("round %d: %d acknowledged this round, %d total, all present", round, len(ids), len(acked))
	}
}

func verifyCrash(t *testing.T, path string, acked map[string]bool) {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	for id := range acked {
		if _, err := s.Get("crash", id); err != nil {
			t.Fatalf("acknowledged %s lost: %v", id, err)
		}
		var i int
		if _, err := fmt.Sscanf(id[strings.IndexByte(id, '-')+1:], "%d", &i); err != nil {
			t.Fatal(err)
		}
		v, err := s.Vector("crash", id)
		if err != nil {
			t.Fatalf("acknowledged vector %s lost: %v", id, err)
		}
		equalVec(t, v, vec(i, crashDim))
		if i%5 == 4 {
			if _, err := s.Get("crash:b", id); err != nil {
				t.Fatalf("acknowledged batch item crash:b/%s lost: %v", id, err)
			}
		}
	}
	st, err := s.Check(func(p store.Problem) { t.Errorf("after kill: %v", p) })
	if err != nil || st.Problems != 0 {
		t.Fatalf("Check after kill: %+v %v", st, err)
	}
}
