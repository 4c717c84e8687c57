// Package servicetest holds the test fixtures of the memory service that its
// facade's tests and its keepers' tests share: a deterministic embedder,
// memories, a bbolt store in a temporary folder. It imports neither the
// facade nor a keeper, so that each can use it from its own tests.
package servicetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// HashEmbedder is a deterministic stand-in for an embedding model: each
// analysed term is hashed to a dimension, so texts sharing terms have
// positive cosine. It measures nothing; it only exercises the code paths.
// Fail, when set, fails every call; Calls counts them.
type HashEmbedder struct {
	N     int
	Calls atomic.Int64
	Fail  error
}

// Dim is the vectors' dimension.
func (h *HashEmbedder) Dim() int { return h.N }

// Embed hashes each text's terms into a vector.
func (h *HashEmbedder) Embed(_ context.Context, texts []string, _ bool) ([][]float32, error) {
	h.Calls.Add(1)
	if h.Fail != nil {
		return nil, h.Fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.N)
		for _, term := range lexical.Terms(t) {
			f := fnv.New32a()
			_, _ = f.Write([]byte(term))
			v[f.Sum32()%uint32(h.N)]++
		}
		out[i] = v
	}
	return out, nil
}

// Day0 is the time of every memory Item makes.
var Day0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// Item is a memory without a vector.
func Item(ns, id, text string) store.Item {
	return store.Item{Memory: memory.Memory{Namespace: ns, ID: id, Text: text, Time: Day0}}
}

// OpenStore opens a bbolt store at path (a new file in a temporary folder
// when path is ""), closed at the end of the test.
func OpenStore(t testing.TB, path string) *bolt.Store {
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

// CandIDs lists the candidates' IDs in order.
func CandIDs(cs []post.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// FillStore writes n memories "m0000".. into ns of st directly (no
// memory service), with HashEmbedder vectors of dimension 16 when withVec is set.
func FillStore(t testing.TB, st *bolt.Store, ns string, n int, withVec bool) {
	t.Helper()
	var items []store.Item
	for i := range n {
		it := Item(ns, fmt.Sprintf("m%04d", i), fmt.Sprintf("memory number w%d about topic t%d", i, i%7))
		if withVec {
			v, _ := (&HashEmbedder{N: 16}).Embed(context.Background(), []string{it.Memory.Text}, false)
			it.Vector = v[0]
		}
		items = append(items, it)
	}
	if err := st.PutBatch(items); err != nil {
		t.Fatal(err)
	}
}
