package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/testmodel"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestServeMemoryWithEmbedder: `serve --embed-model DIR` embeds memories at
// add time and queries at search time, so searches are hybrid. The tiny
// model has random weights: this proves the wiring, not retrieval quality.
func TestServeMemoryWithEmbedder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "embed")
	if err := testmodel.Run([]string{"--kind", "embedding", "--size", "tiny", "--seed", "1", "--out", dir}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("testmodel: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := testMemoryConfig(t)
	m.Memory.EmbedModel, m.Model.RuntimeLib = dir, testenv.ORTLib()
	e, closeMem, err := openMemory(m, nil, retrieval.Reranking{}, log, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeMem()
	ctx := context.Background()
	if err := e.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	added, err := e.Add(ctx, []store.Item{
		{Memory: memory.Memory{Namespace: "u", ID: "1", Text: "Caroline went to the support group"}},
		{Memory: memory.Memory{Namespace: "u", ID: "2", Text: "Melanie painted a sunset"}},
	})
	if err != nil || added[0].Vector != retrieval.VectorIndexed {
		t.Fatalf("add: %+v %v", added, err)
	}
	res, err := e.Retrieve(ctx, retrieval.Query{Namespace: "u", Text: "support group"})
	if err != nil || res.Level != retrieval.LevelHybrid || len(res.Candidates) != 2 {
		t.Fatalf("retrieve: %+v %v", res, err)
	}
	if _, ok := res.Candidates[0].Scores["vector"]; !ok {
		t.Fatalf("no vector score: %v", res.Candidates[0].Scores)
	}

	// A dimension that contradicts the model, and a folder that is not one.
	m2 := m
	m2.Memory.Store, m2.Memory.VectorDim = filepath.Join(t.TempDir(), "m2.db"), 7
	if _, _, err := openMemory(m2, nil, retrieval.Reranking{}, log, io.Discard); err == nil || !strings.Contains(err.Error(), "--vector-dim 7") {
		t.Fatalf("dim mismatch: %v", err)
	}
	m3 := m
	m3.Memory.Store, m3.Memory.EmbedModel = filepath.Join(t.TempDir(), "m3.db"), t.TempDir()
	if _, _, err := openMemory(m3, nil, retrieval.Reranking{}, log, io.Discard); err == nil || !strings.Contains(err.Error(), "--embed-model") {
		t.Fatalf("bad model folder: %v", err)
	}
}

func TestSnapshotDirFor(t *testing.T) {
	for _, c := range []struct{ store, flag, want string }{
		{"/d/m.db", "", "/d/m.db.snapshots"},
		{"/d/m.db", "none", ""},
		{"/d/m.db", "/elsewhere", "/elsewhere"},
	} {
		if got := snapshotDirFor(c.store, c.flag); got != c.want {
			t.Errorf("snapshotDirFor(%q, %q) = %q, want %q", c.store, c.flag, got, c.want)
		}
	}
}

// TestServeMemorySnapshots: a restart of the memory API loads the vector
// index saved at shutdown next to the store, and --snapshot-dir none
// rebuilds it.
func TestServeMemorySnapshots(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := testMemoryConfig(t)
	m.Memory.VectorDim = 4
	ctx := context.Background()
	open := func(m Config) (*retrieval.Service, func()) {
		t.Helper()
		e, closeMem, err := openMemory(m, nil, retrieval.Reranking{}, log, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return e, closeMem
	}
	e, closeMem := open(m)
	var items []store.Item
	for i := range 1000 { // retrieval's default SnapshotMinVectors
		items = append(items, store.Item{Memory: memory.Memory{Namespace: "u", ID: fmt.Sprint(i), Text: "memory"},
			Vector: []float32{1, float32(i), 0, 1}})
	}
	if _, err := e.Add(ctx, items); err != nil {
		t.Fatal(err)
	}
	closeMem()
	for _, c := range []struct{ snapshotDir, want string }{{"", "snapshot"}, {"none", "rebuild"}} {
		m2 := m
		m2.Memory.SnapshotDir = c.snapshotDir
		e, closeMem := open(m2)
		if s := e.Stats("u"); s.VectorSource != c.want || s.Vectors != 1000 {
			t.Errorf("--snapshot-dir %q: %+v, want vectors from %s", c.snapshotDir, s, c.want)
		}
		closeMem()
	}
}

// TestServeMemoryAnalyzer: --analyzer reaches memory search. With bigram
// analysis a Chinese query finds only the memory sharing a word-pair with
// it (see retrieval's TestMemorySearchCJKAnalyzer for the ranks by hand);
// an unknown mode, and a gse mode in a binary without the segmenter, are
// usage errors naming the flag.
func TestServeMemoryAnalyzer(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	rk := lexrank.Ranking{K1: 0, B: 0}
	for _, tc := range []struct {
		analyzer string
		want     []string
	}{{"", []string{"d", "t"}}, {"bigram", []string{"t"}}} {
		m := testMemoryConfig(t)
		m.Memory.Analyzer = tc.analyzer
		e, closeMem, err := openMemory(m, nil, retrieval.Reranking{}, log, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		for _, mem := range []memory.Memory{{ID: "t", Text: "看天气"}, {ID: "d", Text: "每天读报，预习功课，气色很好"}, {ID: "u", Text: "我喜欢猫"}} {
			mem.Namespace = "zh"
			if _, err := e.Add(ctx, []store.Item{{Memory: mem}}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := e.Retrieve(ctx, retrieval.Query{Namespace: "zh", Text: "天气预报", Ranking: &rk})
		var got []string
		for _, c := range res.Candidates {
			got = append(got, c.ID)
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("--analyzer %q: %v (%v), want %v", tc.analyzer, got, err, tc.want)
		}
		closeMem()
	}
	bads := []string{"trigram"}
	if !gseLinked {
		bads = append(bads, "gse")
	}
	for _, bad := range bads {
		m := testMemoryConfig(t)
		m.Memory.Analyzer = bad
		if _, _, err := openMemory(m, nil, retrieval.Reranking{}, log, io.Discard); !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "--analyzer") {
			t.Errorf("--analyzer %s: %v, want a usage error naming --analyzer", bad, err)
		}
	}
}

// testMemoryConfig returns serve's defaults with a store in a temporary
// folder, no idle snapshots and no back-fill (each test turns on what it
// exercises).
func testMemoryConfig(t *testing.T) Config {
	t.Helper()
	c := DefaultConfig()
	c.Memory.Store = filepath.Join(t.TempDir(), "m.db")
	c.Memory.SnapshotIdle, c.Memory.Backfill = 0, false
	return c
}
