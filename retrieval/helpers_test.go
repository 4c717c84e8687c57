package retrieval

import (
	"context"
	"hash/fnv"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/follow"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/owner"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// hashEmbedder is a deterministic stand-in for an embedding model: each
// analysed term is hashed to a dimension, so texts sharing terms have
// positive cosine. It measures nothing; it only exercises the code paths.
type hashEmbedder struct {
	dim   int
	calls atomic.Int64
	fail  error
}

func (h *hashEmbedder) Dim() int { return h.dim }

func (h *hashEmbedder) Embed(_ context.Context, texts []string, _ bool) ([][]float32, error) {
	h.calls.Add(1)
	if h.fail != nil {
		return nil, h.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dim)
		for _, term := range lexical.Terms(t) {
			f := fnv.New32a()
			_, _ = f.Write([]byte(term))
			v[f.Sum32()%uint32(h.dim)]++
		}
		out[i] = v
	}
	return out, nil
}

// fixedReranker scores a text by the first number found in a table keyed
// by substring, else 0.5.
type fixedReranker struct {
	by   map[string]float64
	fail error
}

func (f fixedReranker) Rerank(_ context.Context, _ string, texts []string) ([]float64, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	out := make([]float64, len(texts))
	for i, t := range texts {
		out[i] = 0.5
		for sub, s := range f.by {
			if strings.Contains(t, sub) {
				out[i] = s
			}
		}
	}
	return out, nil
}

var day0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func item(ns, id, text string) store.Item {
	return store.Item{Memory: memory.Memory{Namespace: ns, ID: id, Text: text, Time: day0}}
}

func openStore(t testing.TB, path string) *bolt.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "m.db")
	}
	st, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newEngine opens an engine over st, starts it and waits for its build.
func newEngine(t testing.TB, st *bolt.Store, emb Embedder, cfg Config) *Engine {
	t.Helper()
	e, err := New(st, emb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	if err := e.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func mustAdd(t testing.TB, e *Engine, items ...store.Item) []Added {
	t.Helper()
	got, err := e.Add(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func candIDs(cs []post.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// space returns ns's indexes as the keeper holds them (nil when none).
func (e *Engine) space(ns string, _ bool) (*keep.Space, error) {
	return e.k.(interface{ Space(string) *keep.Space }).Space(ns), nil
}

// backfilled and afterBuild are the owner's (see owner.Owner.AfterBuild).
func (e *Engine) backfilled() <-chan struct{} { return e.k.(*owner.Owner).Backfilled() }
func (e *Engine) afterBuild() <-chan struct{} { return e.k.(*owner.Owner).AfterBuild() }

// loaded is the follower's (see follow.Follower.Loaded).
func (e *Engine) loaded(ns string) <-chan struct{} { return e.k.(*follow.Follower).Loaded(ns) }
