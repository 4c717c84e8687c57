package retrieval

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/internal/servicetest"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The fixtures the keepers' tests share (retrieval/internal/servicetest).
type hashEmbedder = servicetest.HashEmbedder

var (
	day0      = servicetest.Day0
	item      = servicetest.Item
	openStore = servicetest.OpenStore
	candIDs   = servicetest.CandIDs
	fillStore = servicetest.FillStore
)

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

// newService opens a service over st, starts it and waits for its build.
func newService(t testing.TB, st Store, emb Embedder, cfg Config) *Service {
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

func mustAdd(t testing.TB, e *Service, items ...store.Item) []Added {
	t.Helper()
	got, err := e.Add(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// space returns ns's indexes as the keeper holds them (nil when none).
func (s *Service) space(ns string, _ bool) (*keep.Space, error) {
	return s.k.(interface{ Space(ns string) *keep.Space }).Space(ns), nil
}
