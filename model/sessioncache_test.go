package model

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// TestSessionCache: the first open writes an entry, the next loads it; the
// scores of the graph, the saved and the cached session are bit for bit
// the same; a damaged entry is rebuilt; a changed model gets a new entry;
// a cache folder that cannot be written costs only the cache.
func TestSessionCache(t *testing.T) {
	if err := InitRuntime(testenv.ORTLib()); err != nil {
		t.Fatal(err)
	}
	src := tinyModel(t, onnx.HeadLogit, true) // external data, as full-size models have
	dir := t.TempDir()
	for _, f := range []string{onnx.SharedPrefixFile, onnx.DataFile} {
		raw, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	graph := filepath.Join(dir, onnx.SharedPrefixFile)
	tok := tokentest.Qwen(t)
	req := rerank.Request{Query: "What did Caroline do?", Docs: mixedDocs(6)}
	cache := filepath.Join(t.TempDir(), "sessions")
	score := func(cfg SessionConfig, wantFrom string) []float64 {
		t.Helper()
		ins, outs, err := graphIO(graph)
		if err != nil {
			t.Fatal(err)
		}
		ps := &PrefixSession{callTokens: prefixCallTokens}
		inputs, outputs, err := ps.checkIO(ins, outs)
		if err != nil {
			t.Fatal(err)
		}
		var from string
		if ps.sess, from, err = openSessionFrom(graph, inputs, outputs[:1], cfg); err != nil {
			t.Fatal(err)
		}
		if from != wantFrom {
			t.Errorf("session from %q, want %q", from, wantFrom)
		}
		sc, err := rerank.NewScorer(tok, ps, rerank.DefaultScorerConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		out, err := sc.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		logits := make([]float64, len(out))
		for i, s := range out {
			logits[i] = s.Logit
		}
		return logits
	}
	plain := DefaultSessionConfig()
	plain.IntraOpThreads = 2
	cached := plain
	cached.SessionCacheDir = cache

	want := score(plain, fromGraph)
	for _, step := range []string{fromSaved, fromCache, fromCache} {
		if got := score(cached, step); !slices.Equal(got, want) {
			t.Errorf("%s session: logits %v, want %v bit for bit", step, got, want)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*", onnx.SharedPrefixFile))
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1", len(entries))
	}
	// Damage: the entry's weights cut short.
	data := filepath.Join(filepath.Dir(entries[0]), sessionCacheData)
	if err := os.Truncate(data, 100); err != nil {
		t.Fatal(err)
	}
	if got := score(cached, fromSaved); !slices.Equal(got, want) {
		t.Errorf("after damage: logits %v, want %v", got, want)
	}
	// A new model (the same file touched) never reads the old entry.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(dir, onnx.DataFile), later, later); err != nil {
		t.Fatal(err)
	}
	score(cached, fromSaved)
	if entries, _ = filepath.Glob(filepath.Join(cache, "*", onnx.SharedPrefixFile)); len(entries) != 2 {
		t.Errorf("%d entries after the model changed, want 2", len(entries))
	}
	// A cache "folder" that is a file: the session is built without it.
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	broken := plain
	broken.SessionCacheDir = file
	if got := score(broken, fromGraph); !slices.Equal(got, want) {
		t.Errorf("without a usable cache: logits %v, want %v", got, want)
	}
}
