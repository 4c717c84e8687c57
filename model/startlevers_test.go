package model

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/pagecache"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// TestStartLevers: every way of starting faster scores as the normal path
// does, float32 and int8, through Open as serve calls it: prefetching
// (a hint: the same session), the session cache (saved, then loaded with
// and without prefetching) and skipping prepacking (other kernels' order of
// summation, so within a tolerance rather than bit for bit: scores, the
// probabilities serve returns, within 1e-6, logits within 1e-5; a full-size
// float32 model moved logits by up to 2.8e-6, the size of float32's own
// error on its 1024- and 3072-long dot products).
// RERANKD_START_MODEL names another folder with an int8 variant (a
// full-size testmodel, say) to check instead of the tiny one.
func TestStartLevers(t *testing.T) {
	if err := InitRuntime(testenv.ORTLib()); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("RERANKD_START_MODEL")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "tiny")
		if err := folder.WriteTestModel(dir, arch.Tiny(), 11, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), ForceExternal: true,
			Quants: []onnx.Quant{onnx.QuantInt8}}); err != nil {
			t.Fatal(err)
		}
	}
	req := rerank.Request{Query: "What did Caroline do?", Docs: mixedDocs(6)}
	score := func(t *testing.T, q onnx.Quant, cfg SessionConfig) []rerank.Score {
		t.Helper()
		o := DefaultOptions()
		o.RuntimeLib, o.Quant, o.Session = testenv.ORTLib(), q, cfg
		sc, _, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close() //nolint:errcheck // read-only
		out, err := sc.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
		t.Run(q.String(), func(t *testing.T) {
			plain := DefaultSessionConfig()
			plain.IntraOpThreads = 2
			want := score(t, q, plain)
			cache := t.TempDir()
			for _, tc := range []struct {
				name  string
				edit  func(*SessionConfig)
				exact bool
			}{
				{"prefetch", func(c *SessionConfig) { c.Prefetch = true }, true},
				{"session cache, writing", func(c *SessionConfig) { c.SessionCacheDir = cache }, true},
				{"session cache, loading", func(c *SessionConfig) { c.SessionCacheDir = cache }, true},
				{"session cache, loading, prefetch", func(c *SessionConfig) { c.SessionCacheDir, c.Prefetch = cache, true }, true},
				{"no prepacking", func(c *SessionConfig) { c.DisablePrepacking = true }, false},
				{"no prepacking, prefetch", func(c *SessionConfig) { c.DisablePrepacking, c.Prefetch = true, true }, false},
			} {
				cfg := plain
				tc.edit(&cfg)
				got := score(t, q, cfg)
				if len(got) != len(want) {
					t.Fatalf("%s: %d scores, want %d", tc.name, len(got), len(want))
				}
				var worstLogit, worstScore float64
				for i := range got {
					dl, ds := math.Abs(got[i].Logit-want[i].Logit), math.Abs(got[i].Score-want[i].Score)
					worstLogit, worstScore = max(worstLogit, dl), max(worstScore, ds)
					if tc.exact && (dl != 0 || ds != 0) || dl > 1e-5 || ds > 1e-6 {
						t.Errorf("%s: document %d logit %.9g score %.9g, want %.9g and %.9g (exact %v)", tc.name, i,
							got[i].Logit, got[i].Score, want[i].Logit, want[i].Score, tc.exact)
					}
				}
				t.Logf("%s: max |dlogit| %.3g, max |dscore| %.3g", tc.name, worstLogit, worstScore)
			}
		})
	}
}

// TestPrefetchGraph: after the weights are dropped from the page cache,
// prefetching the graph reads its non-embedding ranges back.
func TestPrefetchGraph(t *testing.T) {
	if !pagecache.Supported {
		t.Skip("no page cache control on this system")
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := folder.WriteTestModel(dir, arch.Tiny(), 11, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), ForceExternal: true}); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, onnx.DataFile)
	u, err := pagecache.Evict(data)
	if err != nil {
		t.Fatal(err)
	}
	if u.Fraction() > 0.1 {
		t.Skipf("this file system keeps files in memory: %.0f%% resident after evicting", 100*u.Fraction())
	}
	ranges, err := onnx.ExternalRanges(filepath.Join(dir, onnx.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, r := range ranges {
		if !r.GatherOnly {
			want += r.Len
		}
	}
	prefetchGraph(filepath.Join(dir, onnx.ModelFile), false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if u, err = pagecache.Resident(data); err != nil {
			t.Fatal(err)
		}
		if u.ResidentBytes >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if u.ResidentBytes < want {
		t.Errorf("after prefetching: %d bytes resident, want at least the %d the graph's non-embedding weights take", u.ResidentBytes, want)
	}
	if u.ResidentBytes >= u.Bytes && want < u.Bytes/2 {
		t.Errorf("the whole file (%d bytes) was read, want only the %d the graph needs (and page rounding)", u.Bytes, want)
	}
}
