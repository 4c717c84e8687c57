package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/internal/crashtest"
	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// crashPGConfig snapshots each namespace's vector index in the database
// as soon as its writes pause for 5ms, so that forgets meet snapshots and
// kills land before, during and after saves.
func crashPGConfig() Config {
	cfg := DefaultConfig()
	cfg.Follow.SnapshotIdle = 5 * time.Millisecond
	cfg.Follow.SnapshotMinVectors = 1
	cfg.Follow.CatchUp = 30 * time.Second
	return cfg
}

// TestUpdateForgetCrashPGChild is the child of TestUpdateForgetCrashPG:
// TestUpdateForgetCrashChild's loop over the PostgreSQL database at the
// URL the parent gives, until SIGKILLed.
func TestUpdateForgetCrashPGChild(t *testing.T) {
	url, round := crashtest.Child()
	if url == "" {
		t.Skip("child of TestUpdateForgetCrashPG only")
	}
	st, err := pgstore.Open(url, pgstore.DefaultOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	e, err := New(st, &hashEmbedder{N: 16}, crashPGConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child engine:", err)
		os.Exit(2)
	}
	e.Start()
	updateForgetLoop(e, round)
}

// TestUpdateForgetCrashPG is TestUpdateForgetCrash over PostgreSQL: the
// child, a process of its own writing through pgstore, is SIGKILLed at
// random moments; every other round the PostgreSQL server is then
// crashed too (pgtest's Kill: SIGKILL of the postmaster and its backends)
// and recovers on restart. After each round a fresh engine finds every
// acknowledged update, and every acknowledged forget left no memory, no
// text or vector in the table (tombstones hold neither) and no snapshot.
func TestUpdateForgetCrashPG(t *testing.T) {
	if arg, _ := crashtest.Child(); arg != "" {
		t.Skip("running as child")
	}
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	srv := pgtest.Start(t) // its own server: Kill is refused on the shared one
	url := srv.NewDB(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	updated, forgot, mayGo := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for round := range rounds {
		recordUpdateForgetAcks(t, round, crashtest.Run(t, "TestUpdateForgetCrashPGChild", url, round, time.Duration(100+rng.IntN(600))*time.Millisecond), updated, forgot, mayGo)
		if round%2 == 1 {
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := srv.StartAgain(); err != nil {
				t.Fatal(err)
			}
		}
		verifyUpdateForgetPG(t, url, updated, forgot, mayGo)
		t.Logf("round %d: %d updates, %d forgets acknowledged so far, all held", round, len(updated), len(forgot))
	}
	if len(updated) == 0 || len(forgot) == 0 {
		t.Fatalf("the child acknowledged %d updates and %d forgets: nothing was tested", len(updated), len(forgot))
	}
}

func verifyUpdateForgetPG(t *testing.T, url string, updated, forgot, mayGo map[string]bool) {
	t.Helper()
	st, err := pgstore.Open(url, pgstore.DefaultOptions())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	e := newService(t, st, &hashEmbedder{N: 16}, crashPGConfig())
	defer e.Close()
	if _, err := st.Check(func(p store.Problem) { t.Errorf("store check after kill: %v", p) }); err != nil {
		t.Fatalf("store check after kill: %v", err)
	}
	checkUpdateForget(t, e, st, updated, forgot, mayGo)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for ns := range forgot {
		var kept, snaps int
		err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM rerankd_memories WHERE ns = $1 AND (NOT deleted OR memory IS NOT NULL OR vector IS NOT NULL)),
			(SELECT count(*) FROM rerankd_snapshots WHERE ns = $1) + (SELECT count(*) FROM rerankd_snapshot_chunks WHERE ns = $1)`, ns).Scan(&kept, &snaps)
		if err != nil {
			t.Fatal(err)
		}
		if kept != 0 || snaps != 0 {
			t.Fatalf("forgotten %s: %d rows with a memory or a vector, %d snapshot rows", ns, kept, snaps)
		}
	}
}
