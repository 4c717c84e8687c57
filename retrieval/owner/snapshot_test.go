package owner_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/internal/servicetest"
	"github.com/rerankd/rerankd/retrieval/snap"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

const snapDim = 16

// vecFor is a deterministic pseudo-random vector per ID, so dense search
// for a stored vector finds its own memory first.
func vecFor(id string, dim int) []float32 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(id))
	r := rand.New(rand.NewPCG(f.Sum64(), uint64(dim)))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func vecItem(ns, id string) store.Item {
	it := servicetest.Item(ns, id, "memory "+id+" about something")
	it.Vector = vecFor(id, snapDim)
	return it
}

// putVecs writes n memories with vectors into ns, directly to the store.
func putVecs(t testing.TB, st *bolt.Store, ns string, n int) {
	t.Helper()
	items := make([]store.Item, n)
	for i := range items {
		items[i] = vecItem(ns, fmt.Sprintf("m%03d", i))
	}
	if err := st.PutBatch(items); err != nil {
		t.Fatal(err)
	}
}

func snapConfig(dir string) retrieval.Config {
	cfg := retrieval.DefaultConfig()
	cfg.Dim = snapDim
	cfg.Owner.SnapshotDir = dir
	cfg.Owner.SnapshotMinVectors = 1
	cfg.Owner.SnapshotIdle = 0 // tests save at known points only
	cfg.Owner.Backfill = false
	return cfg
}

// started opens a service and waits for its build and its snapshots
// after the build; the caller closes it (or does not: a crash).
func started(t testing.TB, st *bolt.Store, cfg retrieval.Config) *retrieval.Service {
	t.Helper()
	svc, err := retrieval.New(st, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-ownerOf(svc).AfterBuild()
	return svc
}

// vectorIDs lists the IDs with a usable stored vector in ns.
func vectorIDs(t testing.TB, st retrieval.Store, ns string, dim int) []string {
	t.Helper()
	recs, _, err := st.Page(ns, "", store.MaxPage, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		if embed.Check(r.Vector, dim) == nil {
			ids = append(ids, r.Memory.ID)
		}
	}
	return ids
}

// agrees checks that e's vector index of ns holds exactly the store's
// usable vectors, that Check agrees, and that dense search finds each
// stored vector's own memory.
func agrees(t *testing.T, svc *retrieval.Service, ns string) {
	t.Helper()
	ctx := context.Background()
	rep, err := svc.Check(ctx, false)
	if err != nil || len(rep.Disagreements) != 0 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	ids := vectorIDs(t, ownerOf(svc).Store(), ns, svc.Dim())
	sp, _ := space(svc, ns)
	if got := sp.Indexes().Vec.Len(); got != len(ids) {
		t.Fatalf("vector index has %d vectors, the store %d", got, len(ids))
	}
	for _, id := range ids {
		res, err := svc.Retrieve(ctx, retrieval.Query{Namespace: ns, Text: "memory", Vector: vecFor(id, svc.Dim()), Mode: retrieval.ModeDense, Depth: 1})
		if err != nil || len(res.Candidates) != 1 || res.Candidates[0].ID != id {
			t.Fatalf("dense search for %s's vector: %v, %v", id, servicetest.CandIDs(res.Candidates), err)
		}
	}
}

func corruptFile(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotRestart runs a service, stops it (Close, or a "crash":
// abandoned without Close), changes things while no service runs, starts
// another, and checks where its vectors came from and that they are
// exactly the store's.
func TestSnapshotRestart(t *testing.T) {
	type env struct {
		st   *bolt.Store
		dir  string
		file string // ns "a"'s snapshot
	}
	noop := func(*testing.T, *retrieval.Service, env) {}
	cases := []struct {
		name   string
		live   func(*testing.T, *retrieval.Service, env) // service 1 running, after its build
		crash  bool                                      // service 1 is not closed
		down   func(*testing.T, env)                     // no service running
		cfg2   func(*retrieval.Config)
		source string // service 2's VectorSource for "a"
		miss   string // and the start of its SnapshotMiss
		absent []string
	}{
		{name: "fresh", live: noop, source: "snapshot"},
		{name: "writes then close", live: func(t *testing.T, svc *retrieval.Service, _ env) {
			mustAdd(t, svc, vecItem("a", "new1"))
			if err := svc.Delete("a", "m003"); err != nil {
				t.Fatal(err)
			}
		}, source: "snapshot", absent: []string{"m003"}},
		{name: "delete then crash", crash: true, live: func(t *testing.T, svc *retrieval.Service, _ env) {
			if err := svc.Delete("a", "m004"); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "stale", absent: []string{"m004"}},
		{name: "add then crash", crash: true, live: func(t *testing.T, svc *retrieval.Service, _ env) {
			mustAdd(t, svc, vecItem("a", "new2"))
		}, source: "rebuild", miss: "stale"},
		{name: "vector write while down", down: func(t *testing.T, v env) {
			if err := v.st.Put(vecItem("a", "down").Memory, vecFor("down", snapDim)); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "stale"},
		{name: "vector dropped while down", down: func(t *testing.T, v env) {
			if err := v.st.Put(servicetest.Item("a", "m005", "now without a vector").Memory, nil); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "stale", absent: []string{"m005"}},
		{name: "lexical-only write while down", down: func(t *testing.T, v env) {
			if err := v.st.Put(servicetest.Item("a", "lex", "no vector here").Memory, nil); err != nil {
				t.Fatal(err)
			}
		}, source: "snapshot"},
		{name: "namespace re-created alike while down", down: func(t *testing.T, v env) {
			// Same number of writes, so the same generation Seq: only the
			// random stamp tells the states apart.
			for i := range 20 {
				if err := v.st.Delete("a", fmt.Sprintf("m%03d", i)); err != nil {
					t.Fatal(err)
				}
			}
			items := make([]store.Item, 20)
			for i := range items {
				items[i] = vecItem("a", fmt.Sprintf("r%03d", i))
			}
			if err := v.st.PutBatch(items); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "stale", absent: []string{"m000"}},
		{name: "missing", down: func(t *testing.T, v env) {
			if err := os.Remove(v.file); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "missing"},
		{name: "flipped byte in the index", down: func(t *testing.T, v env) {
			corruptFile(t, v.file, func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })
		}, source: "rebuild", miss: "corrupt"},
		{name: "flipped byte in the header", down: func(t *testing.T, v env) {
			corruptFile(t, v.file, func(b []byte) []byte { b[20] ^= 0x01; return b })
		}, source: "rebuild", miss: "corrupt"},
		{name: "truncated", down: func(t *testing.T, v env) {
			corruptFile(t, v.file, func(b []byte) []byte { return b[:len(b)*2/3] })
		}, source: "rebuild", miss: "corrupt"},
		{name: "truncated to the magic", down: func(t *testing.T, v env) {
			corruptFile(t, v.file, func(b []byte) []byte { return b[:9] })
		}, source: "rebuild", miss: "corrupt"},
		{name: "empty", down: func(t *testing.T, v env) {
			corruptFile(t, v.file, func([]byte) []byte { return nil })
		}, source: "rebuild", miss: "corrupt"},
		{name: "another namespace's file", down: func(t *testing.T, v env) {
			b, err := os.ReadFile(filepath.Join(v.dir, snap.Name("b")))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(v.file, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, source: "rebuild", miss: "corrupt"},
		{name: "index configuration changed", cfg2: func(c *retrieval.Config) {
			c.HNSW.M = 8
		}, source: "rebuild", miss: "config"},
		{name: "search settings changed", cfg2: func(c *retrieval.Config) {
			c.HNSW.EfSearch = 50
		}, source: "snapshot"},
		{name: "snapshots off", cfg2: func(c *retrieval.Config) { c.Owner.SnapshotDir = "" }, source: "rebuild"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snaps")
			st := servicetest.OpenStore(t, "")
			putVecs(t, st, "a", 20)
			putVecs(t, st, "b", 5)
			v := env{st: st, dir: dir, file: filepath.Join(dir, snap.Name("a"))}
			svc1 := started(t, st, snapConfig(dir))
			if s := svc1.Stats("a"); s.VectorSource != "rebuild" || !strings.HasPrefix(s.SnapshotMiss, "missing") {
				t.Fatalf("first start: %+v", s)
			}
			if _, err := os.Stat(v.file); err != nil {
				t.Fatalf("no snapshot after the build: %v", err)
			}
			if tc.live != nil {
				tc.live(t, svc1, v)
			}
			if tc.crash {
				t.Cleanup(func() { _ = svc1.Close() })
			} else if err := svc1.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.down != nil {
				tc.down(t, v)
			}
			cfg := snapConfig(dir)
			if tc.cfg2 != nil {
				tc.cfg2(&cfg)
			}
			svc2 := started(t, st, cfg)
			defer svc2.Close()
			s := svc2.Stats("a")
			if s.VectorSource != tc.source || !strings.HasPrefix(s.SnapshotMiss, tc.miss) || (tc.miss == "") != (s.SnapshotMiss == "") {
				t.Fatalf("second start: source %q miss %q, want %q %q…", s.VectorSource, s.SnapshotMiss, tc.source, tc.miss)
			}
			agrees(t, svc2, "a")
			agrees(t, svc2, "b")
			// The default ranking's context stage reads the source order,
			// which must survive whichever way the vectors came back.
			if res, err := svc2.Retrieve(context.Background(), retrieval.Query{Namespace: "a", Text: "memory m004"}); err != nil || len(res.Candidates) == 0 {
				t.Fatalf("search after the second start: %+v, %v", res, err)
			}
			sp, _ := space(svc2, "a")
			for _, id := range tc.absent {
				if sp.Indexes().Vec.Has(id) {
					t.Fatalf("%s is back in the vector index", id)
				}
			}
		})
	}
}

// TestSnapshotDimensionChange restarts with an embedder of another
// dimension: the snapshot is refused and the old vectors are not indexed.
func TestSnapshotDimensionChange(t *testing.T) {
	dir := t.TempDir()
	st := servicetest.OpenStore(t, "")
	putVecs(t, st, "a", 10)
	if err := started(t, st, snapConfig(dir)).Close(); err != nil {
		t.Fatal(err)
	}
	cfg := snapConfig(dir)
	cfg.Dim = 0 // the embedder's
	svc, err := retrieval.New(st, &servicetest.HashEmbedder{N: 32}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	defer svc.Close()
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := svc.Stats("a"); s.VectorSource != "rebuild" || !strings.HasPrefix(s.SnapshotMiss, "dimension") || s.Vectors != 0 {
		t.Fatalf("after a dimension change: %+v", s)
	}
}

// TestSnapshotReplaysStartupWrites writes through a service before its
// build: the snapshot (of the state at New) is loaded and those writes
// are re-applied to it.
func TestSnapshotReplaysStartupWrites(t *testing.T) {
	dir := t.TempDir()
	st := servicetest.OpenStore(t, "")
	putVecs(t, st, "a", 20)
	if err := started(t, st, snapConfig(dir)).Close(); err != nil {
		t.Fatal(err)
	}
	svc, err := retrieval.New(st, nil, snapConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	mustAdd(t, svc, vecItem("a", "early"), servicetest.Item("a", "m001", "rewritten without a vector"))
	if err := svc.Delete("a", "m002"); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, svc, vecItem("a", "m003")) // same vector again
	svc.Start()
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := svc.Stats("a"); s.VectorSource != "snapshot" {
		t.Fatalf("stats %+v", s)
	}
	agrees(t, svc, "a")
	sp, _ := space(svc, "a")
	if sp.Indexes().Vec.Has("m001") || sp.Indexes().Vec.Has("m002") || !sp.Indexes().Vec.Has("early") {
		t.Fatal("start-up writes not replayed onto the snapshot")
	}
}

// TestSnapshotWhenIdle: after writes go quiet the snapshot is saved again,
// so a crash then finds it current.
func TestSnapshotWhenIdle(t *testing.T) {
	dir := t.TempDir()
	st := servicetest.OpenStore(t, "")
	putVecs(t, st, "a", 10)
	cfg := snapConfig(dir)
	cfg.Owner.SnapshotIdle = 20 * time.Millisecond
	svc1 := started(t, st, cfg)
	t.Cleanup(func() { _ = svc1.Close() })
	mustAdd(t, svc1, vecItem("a", "late"))
	want, _ := st.VectorGen("a")
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := snapHeaderOf(filepath.Join(dir, snap.Name("a")))
		if err == nil && h.Gen == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("snapshot not refreshed after the writes went quiet: %+v, %v (want %v)", h, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// e1 "crashes" (is never closed before e2 starts).
	svc2 := started(t, st, snapConfig(dir))
	defer svc2.Close()
	if s := svc2.Stats("a"); s.VectorSource != "snapshot" {
		t.Fatalf("stats %+v", s)
	}
	agrees(t, svc2, "a")
}

func snapHeaderOf(path string) (snap.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return snap.Header{}, err
	}
	defer f.Close()
	return snap.ReadHeader(f)
}

// TestSnapshotFiles: small namespaces get no file, deleted namespaces
// lose theirs, leftovers of a crashed save are removed, and a SnapshotDir
// that is a file is a configuration error.
func TestSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	st := servicetest.OpenStore(t, "")
	putVecs(t, st, "big", 12)
	putVecs(t, st, "small", 3)
	putVecs(t, st, "gone", 12)
	stray := filepath.Join(dir, snap.Name("deleted-while-down"))
	tmp := filepath.Join(dir, snap.TmpPrefix+"123"+snap.Ext)
	other := filepath.Join(dir, "README")
	for _, p := range []string{stray, tmp, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := snapConfig(dir)
	cfg.Owner.SnapshotMinVectors = 10
	svc := started(t, st, cfg)
	for i := range 12 {
		if err := svc.Delete("gone", fmt.Sprintf("m%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, ent := range ents {
		names = append(names, ent.Name())
	}
	want := []string{"README", snap.Name("big")}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	if _, err := retrieval.New(st, nil, snapConfig(filepath.Join(dir, "README"))); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("SnapshotDir is a file: %v", err)
	}
}

// TestSnapshotCheckFindsWrongIndex: Check compares the vector index ID by
// ID, so an index with the right count but the wrong IDs is repaired.
func TestSnapshotCheckFindsWrongIndex(t *testing.T) {
	st := servicetest.OpenStore(t, "")
	putVecs(t, st, "a", 10)
	svc := started(t, st, snapConfig(t.TempDir()))
	defer svc.Close()
	sp, _ := space(svc, "a")
	sp.Indexes().Vec.Delete("m001")
	if err := sp.Indexes().Vec.Add("ghost", vecFor("ghost", snapDim)); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Check(context.Background(), true)
	if err != nil || len(rep.Disagreements) != 1 || !slices.Equal(rep.Disagreements[0].MissingVectors, []string{"m001"}) || !rep.Disagreements[0].Repaired {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	agrees(t, svc, "a")
}

// TestSnapshotsAt: the owner names its snapshot directory only when it
// saves snapshots there (a directory and a vector index).
func TestSnapshotsAt(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		dim  int
		dir  string
		want string
	}{
		{"dir and vectors", 4, dir, dir},
		{"no dir", 4, "", "off"},
		{"no vectors", 0, dir, "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := retrieval.DefaultConfig()
			cfg.Dim, cfg.Owner.SnapshotDir = tc.dim, tc.dir
			svc, err := retrieval.New(servicetest.OpenStore(t, ""), nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			if got := svc.SnapshotsAt(); got != tc.want {
				t.Errorf("SnapshotsAt() = %q, want %q", got, tc.want)
			}
		})
	}
}
