package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestServeMemoryWithEmbedder: `serve --embed-model DIR` embeds memories at
// add time and queries at search time, so searches are hybrid. The tiny
// model has random weights: this proves the wiring, not retrieval quality.
func TestServeMemoryWithEmbedder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "embed")
	if code, _, errs := runCLI(t, "testmodel", "--kind", "embedding", "--size", "tiny", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := &memoryFlags{store: filepath.Join(t.TempDir(), "m.db"), embedModel: dir, ortLib: testenv.ORTLib(), tokenizer: defaultTokenizer()}
	e, closeMem, err := openMemory(m, log, io.Discard)
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
	m2 := *m
	m2.store, m2.vectorDim = filepath.Join(t.TempDir(), "m2.db"), 7
	if _, _, err := openMemory(&m2, log, io.Discard); err == nil || !strings.Contains(err.Error(), "--vector-dim 7") {
		t.Fatalf("dim mismatch: %v", err)
	}
	m3 := *m
	m3.store, m3.embedModel = filepath.Join(t.TempDir(), "m3.db"), t.TempDir()
	if _, _, err := openMemory(&m3, log, io.Discard); err == nil || !strings.Contains(err.Error(), "--embed-model") {
		t.Fatalf("bad model folder: %v", err)
	}
}
