package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

func TestAddGetDeleteList(t *testing.T) {
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	got := mustAdd(t, e, item("a", "1", "I live in Berlin"), item("a", "2", "I moved to Paris"))
	if len(got) != 2 || got[0].Vector != VectorNone || got[1].ID != "2" {
		t.Fatalf("Add = %+v", got)
	}
	rec, err := e.Get("a", "2")
	if err != nil || rec.Memory.Text != "I moved to Paris" || rec.Memory.SchemaVersion != memory.CurrentSchema {
		t.Fatalf("Get = %+v, %v", rec, err)
	}
	if _, err := e.Get("a", "3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v, want ErrNotFound", err)
	}
	if _, err := e.Get("../a", "3"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Get bad namespace: %v, want ErrInvalid", err)
	}
	page, next, err := e.List("a", "", 1, nil)
	if err != nil || len(page) != 1 || page[0].Memory.ID != "1" || next != "1" {
		t.Fatalf("List page 1 = %v %q %v", page, next, err)
	}
	if err := e.Delete("a", "1"); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete("a", "1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	res, err := e.Retrieve(context.Background(), Query{Namespace: "a", Text: "Berlin"})
	if err != nil || len(res.Candidates) != 0 {
		t.Fatalf("deleted memory still retrieved: %+v %v", res, err)
	}
	if st := e.Stats("a"); st.Indexed != 1 || !st.Ready {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestAddRejectsBadBatchAtomically(t *testing.T) {
	e := newService(t, openStore(t, ""), nil, DefaultConfig())
	bad := []store.Item{
		item("a", "ok", "fine"),
		item("a", "", "no id"),
		item("a/b", "x", "separator in namespace"),
		item("a", "y", ""),
		{Memory: memory.Memory{Namespace: "a", ID: "v", Text: "t"}, Vector: []float32{1}},
	}
	_, err := e.Add(context.Background(), bad)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, want := range []string{"memory 1", "memory 2", "memory 3", "memory 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not report %s", err, want)
		}
	}
	if n, _ := e.b.Store().Count("a"); n != 0 {
		t.Fatalf("a rejected batch wrote %d memories", n)
	}
	if _, err := e.Add(context.Background(), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty batch: %v", err)
	}
}

func TestNamespacesNeverSeeEachOther(t *testing.T) {
	e := newService(t, openStore(t, ""), &hashEmbedder{N: 32}, DefaultConfig())
	mustAdd(t, e, item("alice", "m1", "my password is swordfish"), item("bob", "m1", "my password is hunter2"),
		item("bob", "m2", "swordfish recipe"))
	for _, tc := range []struct{ ns, q, want string }{
		{"alice", "password swordfish", "my password is swordfish"},
		{"bob", "password", "my password is hunter2"},
	} {
		res, err := e.Retrieve(context.Background(), Query{Namespace: tc.ns, Text: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if res.Level != LevelHybrid {
			t.Fatalf("level %s (%s)", res.Level, res.Why)
		}
		for _, c := range res.Candidates {
			rec, err := e.Get(tc.ns, c.ID)
			if err != nil || rec.Memory.Text != c.Text {
				t.Fatalf("%s got candidate %q (%q) that is not its own", tc.ns, c.ID, c.Text)
			}
		}
		if res.Candidates[0].Text != tc.want {
			t.Fatalf("%s: top %q, want %q", tc.ns, res.Candidates[0].Text, tc.want)
		}
	}
	if res, _ := e.Retrieve(context.Background(), Query{Namespace: "carol", Text: "password"}); len(res.Candidates) != 0 {
		t.Fatalf("empty namespace returned %v", candIDs(res.Candidates))
	}
}

func TestVectorsAndDimensions(t *testing.T) {
	ctx := context.Background()
	t.Run("no vector index", func(t *testing.T) {
		e := newService(t, openStore(t, ""), nil, DefaultConfig())
		_, err := e.Add(ctx, []store.Item{{Memory: item("a", "1", "x").Memory, Vector: []float32{1, 2}}})
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrNoVectors) {
			t.Fatalf("err = %v, want ErrInvalid+ErrNoVectors", err)
		}
	})
	e := newService(t, openStore(t, ""), nil, Config{Dim: 3, BM25: DefaultConfig().BM25,
		Fusion: DefaultConfig().Fusion, HNSW: DefaultConfig().HNSW, Follow: DefaultConfig().Follow, Depth: 10, ScanLimit: 100, PageSize: 10})
	cases := []struct {
		name    string
		vec     []float32
		wantErr bool
		status  VectorStatus
	}{
		{"ok", []float32{1, 0, 0}, false, VectorIndexed},
		{"none", nil, false, VectorNone},
		{"zero refused but stored", []float32{0, 0, 0}, false, VectorZero},
		{"wrong dimension", []float32{1, 0}, true, ""},
		{"NaN", []float32{1, float32(math.NaN()), 0}, true, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprint("m", i)
			got, err := e.Add(ctx, []store.Item{{Memory: item("a", id, "apple "+id).Memory, Vector: tc.vec}})
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || got[0].Vector != tc.status {
				t.Fatalf("Add = %+v, %v; want status %s", got, err, tc.status)
			}
			res, err := e.Retrieve(ctx, Query{Namespace: "a", Text: id})
			if err != nil || len(res.Candidates) == 0 || res.Candidates[0].ID != id {
				t.Fatalf("memory %s not lexically searchable: %+v %v", id, res, err)
			}
		})
	}
	if st := e.Stats("a"); st.Vectors != 1 || st.Indexed != 3 {
		t.Fatalf("Stats = %+v, want 1 vector, 3 indexed", st)
	}
	if _, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "q", Vector: []float32{1}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("query vector of wrong dimension: %v", err)
	}
	// With a client query vector the answer is hybrid: m0 is found by
	// its vector although the text shares no term with it.
	res, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "zzz", Vector: []float32{2, 0, 0}})
	if err != nil || res.Level != LevelHybrid || len(res.Candidates) != 1 || res.Candidates[0].ID != "m0" {
		t.Fatalf("hybrid by client vector = %+v, %v", res, err)
	}
	// Modes: dense uses only the vector list; bm25 ignores the vector;
	// hybrid and dense refuse to run without a query vector.
	res, err = e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Vector: []float32{2, 0, 0}, Mode: ModeDense})
	if err != nil || res.Level != LevelDense || len(res.Candidates) != 1 || res.Candidates[0].Scores["bm25"] != 0 {
		t.Fatalf("dense = %+v, %v", res, err)
	}
	res, err = e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Vector: []float32{2, 0, 0}, Mode: ModeBM25})
	if err != nil || res.Level != LevelBM25 || len(res.Candidates) != 3 {
		t.Fatalf("bm25 mode = %+v, %v", res, err)
	}
	for _, m := range []Mode{ModeDense, ModeHybrid} {
		if _, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Mode: m}); !errors.Is(err, ErrNoVectors) {
			t.Fatalf("%s without query vector: %v, want ErrNoVectors", m, err)
		}
	}
	if _, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Mode: "fuzzy"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestEmbedderErrors(t *testing.T) {
	emb := &hashEmbedder{N: 8}
	e := newService(t, openStore(t, ""), emb, DefaultConfig())
	emb.Fail = errors.New("onnx exploded")
	if _, err := e.Add(context.Background(), []store.Item{item("a", "1", "x")}); !errors.Is(err, ErrEmbed) {
		t.Fatalf("Add with failing embedder: %v, want ErrEmbed", err)
	}
	if n, _ := e.b.Store().Count("a"); n != 0 {
		t.Fatal("a failed embedding still wrote the memory")
	}
	if _, err := New(openStore(t, ""), emb, Config{Dim: 9, BM25: DefaultConfig().BM25,
		Fusion: DefaultConfig().Fusion, HNSW: DefaultConfig().HNSW, Follow: DefaultConfig().Follow, Depth: 1, ScanLimit: 1, PageSize: 1}); err == nil {
		t.Fatal("New accepted Dim 9 with an 8-dimensional embedder")
	}
}

func TestConfigValidateReportsAll(t *testing.T) {
	err := Config{Dim: -1}.Validate()
	if err == nil {
		t.Fatal("zero config is valid")
	}
	for _, want := range []string{"Dim", "Depth", "ScanLimit", "PageSize"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %q misses %s", err, want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestTinyVectorOneRule: a vector is either in the index or not answered
// "indexed". [1e-31, 0, 0, 0] has norm 1e-31, below the index's bound, so
// it has no direction: stored lexically, answered zero_refused, and the
// namespace stays clean. The same vector as a query is treated as absent
// (no error from the index), and a usable memory vector still makes the
// answer hybrid.
func TestTinyVectorOneRule(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Dim = 4
	e := newService(t, openStore(t, ""), nil, cfg)
	tiny := []float32{1e-31, 0, 0, 0}
	got := mustAdd(t, e, store.Item{Memory: item("a", "tiny", "apple tiny").Memory, Vector: tiny},
		store.Item{Memory: item("a", "ok", "apple ok").Memory, Vector: []float32{0, 1, 0, 0}})
	sp, _ := e.space("a", false)
	if got[0].Vector != VectorZero || sp.Dirty.Load() {
		t.Fatalf("tiny vector answered %q, namespace dirty %v; want %q and clean", got[0].Vector, sp.Dirty.Load(), VectorZero)
	}
	if st := e.Stats("a"); st.Vectors != 1 {
		t.Fatalf("Stats = %+v, want 1 vector", st)
	}
	res, err := e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Vector: []float32{0, 2, 0, 0}})
	if err != nil || res.Level != LevelHybrid || res.Candidates[0].ID != "ok" {
		t.Fatalf("hybrid = %+v, %v", res, err)
	}
	res, err = e.Retrieve(ctx, Query{Namespace: "a", Text: "apple", Vector: tiny})
	if err != nil || res.Level != LevelBM25 {
		t.Fatalf("tiny query vector = %+v, %v; want bm25, no error", res, err)
	}
}

// TestKeeperConfigValidate: each keeper's config reports every bad field
// by its path, and a value the follower needs is never defaulted by New
// (zero is refused, not replaced).
func TestKeeperConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want []string // FieldError.Field of each problem
	}{
		{"defaults", func(*Config) {}, nil},
		{"owner", func(c *Config) {
			c.Owner.SnapshotIdle, c.Owner.SnapshotMinVectors, c.Owner.BackfillBatch = -1, -1, 0
		}, []string{"Owner.SnapshotIdle", "Owner.SnapshotMinVectors", "Owner.BackfillBatch"}},
		{"backfill off ignores its batch", func(c *Config) { c.Owner.Backfill, c.Owner.BackfillBatch = false, 0 }, nil},
		{"follow", func(c *Config) {
			c.Follow = FollowConfig{IndexMemory: -1, TombstoneRetention: -1, SnapshotIdle: -1, SnapshotMinVectors: -1}
		}, []string{"Follow.IndexMemory", "Follow.CatchUp", "Follow.TombstoneRetention", "Follow.SnapshotIdle", "Follow.SnapshotMinVectors", "Follow.Poll"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			var got []string
			for _, p := range Problems(cfg.Validate()) {
				var fe *FieldError
				if errors.As(p, &fe) {
					got = append(got, fe.Field)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.Follow.CatchUp = 0
	if _, err := New(openStore(t, ""), nil, cfg); err == nil {
		t.Fatal("New accepted CatchUp 0 instead of refusing it")
	}
	cfg = DefaultConfig()
	e := newService(t, openStore(t, ""), nil, cfg)
	if got := e.Config(); got.Follow != cfg.Follow || got.Owner != cfg.Owner {
		t.Fatalf("New rewrote the keepers' config: %+v / %+v, was %+v / %+v", got.Owner, got.Follow, cfg.Owner, cfg.Follow)
	}
}
