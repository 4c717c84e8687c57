package follow_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// sharedService opens a PostgreSQL store on url and a started service over
// it, both closed at the end of the test.
func sharedService(t *testing.T, url string, cfg retrieval.Config) (*retrieval.Service, *pgstore.Store) {
	t.Helper()
	st, err := pgstore.Open(url, pgstore.Options{Dimension: cfg.Dim})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := retrieval.New(st, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	t.Cleanup(func() {
		_ = svc.Close()
		_ = st.Close()
	})
	return svc, st
}

func putN(t *testing.T, st store.Backend, ns string, n int, text func(i int) string) {
	t.Helper()
	var items []store.Item
	for i := range n {
		items = append(items, store.Item{Memory: memory.Memory{Namespace: ns, ID: fmt.Sprintf("m%05d", i), Text: text(i)}})
		if len(items) == 1000 || i == n-1 {
			if err := st.PutBatch(items); err != nil {
				t.Fatal(err)
			}
			items = items[:0]
		}
	}
}

func topID(t *testing.T, svc *retrieval.Service, ns, q string) string {
	t.Helper()
	got, err := svc.Retrieve(context.Background(), retrieval.Query{Namespace: ns, Text: q})
	if err != nil {
		t.Fatalf("retrieve %q in %s: %v", q, ns, err)
	}
	if len(got.Candidates) == 0 {
		return ""
	}
	return got.Candidates[0].ID
}

// TestSharedFollows: two services on one database see each other's adds,
// replaces and deletes at their next search (read-your-writes), build a
// namespace from the database on first use, and follow writes in the
// background without a search asking.
func TestSharedFollows(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	cfg := retrieval.DefaultConfig()
	cfg.Follow.Poll = 50 * time.Millisecond
	a, sa := sharedService(t, url, cfg)
	b, _ := sharedService(t, url, cfg)
	if !a.Shared() || !a.Ready() {
		t.Fatalf("shared %v ready %v", a.Shared(), a.Ready())
	}
	putN(t, sa, "n", 200, func(i int) string { return fmt.Sprintf("filler memory number %d", i) })
	ctx := context.Background()

	// First use on b builds from the database.
	if id := topID(t, b, "n", "number 137"); id != "m00137" {
		t.Fatalf("built from the database: top %q", id)
	}
	if f := b.Follow(); f.Builds != 1 || f.Loaded != 1 || f.Bytes <= 0 {
		t.Fatalf("follow stats after the first search: %+v", f)
	}
	// Add, replace and delete through a; each is visible on b's next search.
	if _, err := a.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "n", ID: "new", Text: "a narwhal surfaced"}}}); err != nil {
		t.Fatal(err)
	}
	if id := topID(t, b, "n", "narwhal"); id != "new" {
		t.Fatalf("add on a, search on b: top %q", id)
	}
	if _, err := a.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "n", ID: "new", Text: "a walrus surfaced"}}}); err != nil {
		t.Fatal(err)
	}
	if id := topID(t, b, "n", "narwhal"); id != "" {
		t.Fatalf("replaced on a, old text still found on b: %q", id)
	}
	if id := topID(t, b, "n", "walrus"); id != "new" {
		t.Fatalf("replaced on a, new text not found on b: %q", id)
	}
	if err := a.Delete("n", "new"); err != nil {
		t.Fatal(err)
	}
	if id := topID(t, b, "n", "walrus"); id != "" {
		t.Fatalf("deleted on a, still found on b: %q", id)
	}
	// A write on a reaches b's index with no search on b asking: by
	// notification (or the 50 ms poll).
	before := b.Stats("n").Indexed
	if _, err := a.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "n", ID: "bg", Text: "background"}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.Stats("n").Indexed != before+1 {
		if time.Now().After(deadline) {
			t.Fatalf("b's index did not follow a's write within 10 s: %d, want %d", b.Stats("n").Indexed, before+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A namespace never written is empty, not an error.
	if got, err := b.Retrieve(ctx, retrieval.Query{Namespace: "never", Text: "x"}); err != nil || len(got.Candidates) != 0 {
		t.Fatalf("unknown namespace: %+v %v", got, err)
	}
	// Check compares indexes with a store of one process only.
	if _, err := b.Check(ctx, false); !errors.Is(err, retrieval.ErrInvalid) {
		t.Fatalf("check on a shared store: %v", err)
	}
}

// TestSharedIndexMemory: past Config.Follow.IndexMemory the least recently used
// namespaces are dropped, and a dropped namespace is rebuilt, complete,
// on its next use.
func TestSharedIndexMemory(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	cfg := retrieval.DefaultConfig()
	svc, st := sharedService(t, url, cfg)
	for _, ns := range []string{"a", "b", "c"} {
		putN(t, st, ns, 300, func(i int) string { return fmt.Sprintf("%s memory %d about the %s river", ns, i, ns) })
	}
	topID(t, svc, "a", "river")
	one := svc.Follow().Bytes
	if one <= 0 {
		t.Fatalf("no size estimate: %+v", svc.Follow())
	}
	// Room for two namespaces, not three.
	cfg.Follow.IndexMemory = 2*one + one/2
	svc, _ = sharedService(t, url, cfg)
	topID(t, svc, "a", "river")
	topID(t, svc, "b", "river")
	topID(t, svc, "c", "river") // a is the least recently used
	f := svc.Follow()
	if f.Evictions != 1 || f.Loaded != 2 || f.Bytes > svc.Config().Follow.IndexMemory {
		t.Fatalf("after three namespaces within room for two: %+v (budget %d)", f, svc.Config().Follow.IndexMemory)
	}
	if sp, _ := space(svc, "a"); sp != nil {
		t.Fatal("the least recently used namespace was kept")
	}
	if id := topID(t, svc, "a", "memory 299"); id != "m00299" {
		t.Fatalf("rebuilt namespace: top %q", id)
	}
	if got := svc.Stats("a").Indexed; got != 300 {
		t.Fatalf("rebuilt namespace holds %d memories, want 300", got)
	}
	if f := svc.Follow(); f.Builds != 4 || f.Evictions != 2 {
		t.Fatalf("after using the dropped namespace again: %+v", f)
	}
}

// TestSharedCatchUpBound: a first build that outlasts Config.Follow.CatchUp is
// not waited for: the search scans the store (complete, and marked scan)
// while the build goes on. A catch-up that outlasts it fails with
// ErrUnavailable (served as 503 with Retry-After) instead of answering
// from indexes that lack acknowledged writes; it keeps what it applied,
// so a retry gets through.
func TestSharedCatchUpBound(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	cfg := retrieval.DefaultConfig()
	cfg.Follow.CatchUp = 50 * time.Millisecond // room for the sequence read, not the build
	cfg.PageSize = 20                          // 1000 round trips: the build takes far longer
	svc, st := sharedService(t, url, cfg)
	putN(t, st, "n", 20000, func(i int) string { return fmt.Sprintf("memory %d", i) })
	ctx := context.Background()
	retry := func(q string) retrieval.Retrieved {
		t.Helper()
		for try := 0; ; try++ {
			got, err := svc.Retrieve(ctx, retrieval.Query{Namespace: "n", Text: q})
			if errors.Is(err, retrieval.ErrUnavailable) && try < 200 {
				time.Sleep(10 * time.Millisecond) // the sequence read, on a loaded machine
				continue
			}
			if err != nil {
				t.Fatalf("retrieve %q: %v", q, err)
			}
			return got
		}
	}
	got := retry("memory 19999")
	sp, _ := space(svc, "n")
	if sp == nil {
		t.Fatal("no build started")
	}
	if got.Level == retrieval.LevelBM25 {
		t.Skip("the 1000-page build finished within 50 ms; nothing to observe")
	}
	if got.Level != retrieval.LevelScan || len(got.Candidates) == 0 || got.Candidates[0].ID != "m19999" {
		t.Fatalf("first search during the build: level %s, %d candidates", got.Level, len(got.Candidates))
	}
	<-followerOf(svc).Loaded("n")
	if got := retry("memory 19999"); got.Level != retrieval.LevelBM25 || got.Candidates[0].ID != "m19999" {
		t.Fatalf("after the build: level %s", got.Level)
	}
	// 20000 more memories written elsewhere: 1000 pages of changes to
	// apply, more than 50 ms of work. The namespace is held meanwhile, so
	// that the background follower cannot apply them first.
	sp.Mu.Lock()
	putN(t, st, "n", 20000, func(i int) string { return fmt.Sprintf("memory %d again", i) })
	sp.Mu.Unlock()
	_, err := svc.Retrieve(ctx, retrieval.Query{Namespace: "n", Text: "again"})
	if !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("search behind 20000 changes with 50 ms to catch up: %v", err)
	}
	if got := retry("memory 12345 again"); got.Level != retrieval.LevelBM25 || got.Candidates[0].ID != "m12345" {
		t.Fatalf("after catching up: level %s, top %v", got.Level, got.Candidates[:min(1, len(got.Candidates))])
	}
}

// TestSharedStoreDown: with the database stopped, a search and a write
// fail with ErrUnavailable (nothing acknowledged, nothing stale); both
// work again once it is back.
func TestSharedStoreDown(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDB(t)
	svc, st := sharedService(t, url, retrieval.DefaultConfig())
	putN(t, st, "n", 10, func(i int) string { return fmt.Sprintf("memory %d", i) })
	topID(t, svc, "n", "memory")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Retrieve(ctx, retrieval.Query{Namespace: "n", Text: "memory"}); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("search with the database down: %v", err)
	}
	if _, err := svc.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "n", ID: "x", Text: "lost?"}}}); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("add with the database down: %v", err)
	}
	if err := svc.Ping(ctx); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Fatalf("ping with the database down: %v", err)
	}
	if err := srv.StartAgain(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for svc.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still unavailable 10 s after the database came back: %v", svc.Ping(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := svc.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "n", ID: "x", Text: "kept"}}}); err != nil {
		t.Fatal(err)
	}
	if id := topID(t, svc, "n", "kept"); id != "x" {
		t.Fatalf("after recovery: top %q", id)
	}
}

// TestSharedVectors: vectors written through one service reach the other's
// vector index (with the memory's text), replaced and removed with it.
func TestSharedVectors(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	cfg := retrieval.DefaultConfig()
	cfg.Dim = 4
	a, _ := sharedService(t, url, cfg)
	b, _ := sharedService(t, url, cfg)
	ctx := context.Background()
	add := func(id, text string, vec []float32) {
		t.Helper()
		if _, err := a.Add(ctx, []store.Item{{Memory: memory.Memory{Namespace: "v", ID: id, Text: text}, Vector: vec}}); err != nil {
			t.Fatal(err)
		}
	}
	add("x", "alpha", []float32{1, 0, 0, 0})
	add("y", "beta", []float32{0, 1, 0, 0})
	dense := func(q []float32) string {
		t.Helper()
		got, err := b.Retrieve(ctx, retrieval.Query{Namespace: "v", Text: "anything", Vector: q, Mode: retrieval.ModeDense})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Candidates) == 0 {
			return ""
		}
		return got.Candidates[0].ID
	}
	if id := dense([]float32{0, 1, 0.1, 0}); id != "y" {
		t.Fatalf("dense search on b: top %q", id)
	}
	add("y", "beta moved", []float32{0, 0, 1, 0}) // replaced vector
	if id := dense([]float32{0, 0, 1, 0}); id != "y" {
		t.Fatalf("replaced vector: top %q", id)
	}
	add("y", "beta without a vector", nil)             // a Put without a vector removes it
	if id := dense([]float32{0, 0, 1, 0}); id != "x" { // Stats does not catch up; a search does
		t.Fatalf("after removing y's vector, the only vector left is x's: top %q", id)
	}
	if got := b.Stats("v"); got.Vectors != 1 || got.Indexed != 2 {
		t.Fatalf("after removing y's vector: %+v", got)
	}
}

// TestSharedSnapshots: a replica that builds a namespace vector by vector
// saves its index to the store; another replica loads it and applies the
// changes made since (adds, replaced vectors, deletes), ending with exactly
// the store's vectors; a quiet period saves a newer snapshot; a damaged
// one is refused and the vectors are inserted instead.
func TestSharedSnapshots(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	cfg := retrieval.DefaultConfig()
	cfg.Dim = 4
	cfg.Follow.SnapshotMinVectors = 10
	cfg.Follow.SnapshotIdle = 100 * time.Millisecond
	cfg.Follow.Poll = 50 * time.Millisecond
	a, st := sharedService(t, url, cfg)
	vec := func(i int) []float32 {
		return []float32{float32(i%7) + 1, float32(i%11) + 1, float32(i%13) + 1, float32(i)}
	}
	var items []store.Item
	for i := range 200 {
		items = append(items, store.Item{Memory: memory.Memory{Namespace: "s", ID: fmt.Sprintf("m%03d", i), Text: fmt.Sprint("memory ", i)}, Vector: vec(i)})
	}
	if err := st.PutBatch(items); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	topID(t, a, "s", "memory")
	waitFor("a saves its snapshot after the build", func() bool { return a.Follow().SnapshotSaves == 1 })
	first, err := st.SnapshotSeq(context.Background(), "s")
	if err != nil || first == 0 {
		t.Fatalf("snapshot sequence: %d %v", first, err)
	}

	// Changes after the snapshot: new memories, replaced vectors, a
	// vector removed, deletes.
	ctx := context.Background()
	for i := 200; i < 205; i++ {
		if err := st.Put(memory.Memory{Namespace: "s", ID: fmt.Sprintf("m%03d", i), Text: fmt.Sprint("memory ", i)}, vec(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{3, 4, 5} {
		if err := st.Put(memory.Memory{Namespace: "s", ID: fmt.Sprintf("m%03d", i), Text: "moved"}, vec(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(memory.Memory{Namespace: "s", ID: "m006", Text: "no vector now"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m010", "m011"} {
		if err := st.Delete("s", id); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]float32{}
	for i := range 205 {
		want[fmt.Sprintf("m%03d", i)] = vec(i)
	}
	for _, i := range []int{3, 4, 5} {
		want[fmt.Sprintf("m%03d", i)] = vec(1000 + i)
	}
	delete(want, "m006")
	delete(want, "m010")
	delete(want, "m011")
	exact := func(svc *retrieval.Service) {
		t.Helper()
		for id, v := range want {
			got, err := svc.Retrieve(ctx, retrieval.Query{Namespace: "s", Text: "x", Vector: v, Mode: retrieval.ModeDense, Depth: 1})
			if err != nil || len(got.Candidates) == 0 || got.Candidates[0].ID != id {
				// Equal vectors (i and i+1001 cannot collide; i%7... can) tie: accept an ID with the same vector.
				if err == nil && len(got.Candidates) > 0 && slices.Equal(want[got.Candidates[0].ID], v) {
					continue
				}
				t.Fatalf("dense search for %s's vector: %+v %v", id, got.Candidates, err)
			}
		}
		if got := svc.Stats("s"); got.Vectors != len(want) || got.Indexed != 203 {
			t.Fatalf("index holds %d vectors and %d memories, want %d and 203", got.Vectors, got.Indexed, len(want))
		}
	}
	b, _ := sharedService(t, url, cfg)
	exact(b)
	if f := b.Follow(); f.SnapshotLoads != 1 {
		t.Fatalf("b did not load the snapshot: %+v", f)
	}
	// a follows the changes, and once they are quiet saves a newer snapshot.
	waitFor("a saves a newer snapshot once its changes are quiet", func() bool {
		seq, err := st.SnapshotSeq(ctx, "s")
		return err == nil && seq > first
	})
	exact(a)

	// A damaged snapshot is refused: the vectors are inserted instead.
	conn, err := pgstore.Open(url, pgstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if ok, err := conn.PutSnapshot(ctx, "s", 1<<40, func(w io.Writer) error { _, err := w.Write([]byte("not a snapshot")); return err }); err != nil || !ok {
		t.Fatalf("planting a damaged snapshot: %v %v", ok, err)
	}
	c, _ := sharedService(t, url, cfg)
	exact(c)
	if f := c.Follow(); f.SnapshotLoads != 0 {
		t.Fatalf("c loaded a damaged snapshot: %+v", f)
	}
	// ... and replaced by c's own.
	waitFor("c replaces the damaged snapshot", func() bool { return c.Follow().SnapshotSaves == 1 })
	if seq, err := st.SnapshotSeq(ctx, "s"); err != nil || seq >= 1<<40 {
		t.Fatalf("snapshot sequence after the replacement: %d %v", seq, err)
	}
}

// TestSharedStaleAfterPurge: a service whose index has not applied deletes
// that were since purged from the store's history answers ErrUnavailable
// once, drops the namespace, and rebuilds it without the deleted memories.
func TestSharedStaleAfterPurge(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	svc, st := sharedService(t, url, retrieval.DefaultConfig())
	putN(t, st, "n", 20, func(i int) string { return fmt.Sprintf("memory %d", i) })
	if id := topID(t, svc, "n", "memory 7"); id != "m00007" {
		t.Fatalf("before: top %q", id)
	}
	sp, _ := space(svc, "n")
	sp.Mu.Lock() // the deletes and the purge happen while this index cannot follow
	for _, id := range []string{"m00007", "m00008"} {
		if err := st.Delete("n", id); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.PurgeTombstones(context.Background(), time.Now().Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("purge: %d %v", n, err)
	}
	sp.Mu.Unlock()
	ctx := context.Background()
	var got retrieval.Retrieved
	var err error
	for try := 0; try < 500; try++ {
		if got, err = svc.Retrieve(ctx, retrieval.Query{Namespace: "n", Text: "memory 7"}); !errors.Is(err, retrieval.ErrUnavailable) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Candidates {
		if c.ID == "m00007" || c.ID == "m00008" {
			t.Fatalf("a deleted memory is still found after the rebuild: %v", c.ID)
		}
	}
	if f := svc.Follow(); f.Builds != 2 {
		t.Fatalf("the namespace was not rebuilt: %+v", f)
	}
}

// TestSnapshotsAt: a follower keeps snapshots in the database only with a
// vector index and SharedSnapshots.
func TestSnapshotsAt(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	for _, tc := range []struct {
		name   string
		dim    int
		shared bool
		want   string
	}{
		{"vectors, shared snapshots", 4, true, "in the database"},
		{"switched off", 4, false, "off"},
		{"no vectors", 0, true, "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := retrieval.DefaultConfig()
			cfg.Dim, cfg.Follow.SharedSnapshots = tc.dim, tc.shared
			svc, _ := sharedService(t, url, cfg)
			if got := svc.SnapshotsAt(); got != tc.want {
				t.Errorf("SnapshotsAt() = %q, want %q", got, tc.want)
			}
		})
	}
}
