package bolt

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

const (
	crashEnvPath  = "RERANKD_STORE_CRASH_PATH"
	crashEnvRound = "RERANKD_STORE_CRASH_ROUND"
	crashDim      = 32
)

// TestCrashChild is the child half of TestCrashDurability: it only runs when
// re-executed with crashEnvPath set. It writes memories forever, printing each
// ID to stdout after Put (durable) returns, until the parent SIGKILLs it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnvPath)
	if path == "" {
		t.Skip("child of TestCrashDurability only")
	}
	s, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	round := os.Getenv(crashEnvRound)
	for i := 0; ; i++ {
		id := fmt.Sprintf("r%s-%06d", round, i)
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
		// os.Stdout is unbuffered: the line is in the pipe once Write returns.
		fmt.Fprintln(os.Stdout, id)
	}
}

// TestCrashDurability SIGKILLs a writer at random moments and checks that
// every write it acknowledged survives and the file stays consistent.
func TestCrashDurability(t *testing.T) {
	if os.Getenv(crashEnvPath) != "" {
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
		ids := runCrashChild(t, path, round, time.Duration(20+rng.IntN(300))*time.Millisecond)
		for _, id := range ids {
			acked[id] = true
		}
		verifyCrash(t, path, acked)
		t.Logf("round %d: %d acknowledged this round, %d total, all present", round, len(ids), len(acked))
	}
}

// runCrashChild starts the child, lets it write for roughly delay after its
// first acknowledgement, SIGKILLs it and returns the acknowledged IDs.
func runCrashChild(t *testing.T, path string, round int, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvPath+"="+path, fmt.Sprintf("%s=%d", crashEnvRound, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ids []string
	first := time.After(10 * time.Second)
	select {
	case id, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("child exited before first ack: %s", stderr.String())
		}
		ids = append(ids, id)
	case <-first:
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
			_ = cmd.Process.Kill() // SIGKILL on Unix
			kill = nil
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("child exited cleanly; stderr: %s", stderr.String())
	}
	// Drop a torn final line (killed mid-print): it is not a complete ID.
	for i, id := range ids {
		if !strings.HasPrefix(id, fmt.Sprintf("r%d-", round)) || len(id) != len(fmt.Sprintf("r%d-000000", round)) {
			ids = ids[:i]
			break
		}
	}
	return ids
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
