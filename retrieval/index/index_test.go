package index

import (
	"testing"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// TestPutRemove: Put indexes text, source order and vector together, a
// later Put replaces all three, a vector the index cannot hold leaves the
// memory lexical-only, and Remove forgets it everywhere.
func TestPutRemove(t *testing.T) {
	s, err := New(Config{BM25: bm25.DefaultConfig(), Vectors: hnsw.DefaultConfig(2), SpeakerKey: "speaker"})
	if err != nil {
		t.Fatal(err)
	}
	m := memory.Memory{ID: "a", Text: "paris trip", Source: "s", Time: day0, Metadata: memory.Strings(map[string]string{"speaker": "Ann"})}
	tests := []struct {
		name     string
		vec      []float32
		text     string
		wantVec  bool
		wantTerm string
	}{
		{"with a vector", []float32{1, 0}, "paris trip", true, "paris"},
		{"replaced, no vector", nil, "rome visit", false, "rome"},
		{"zero vector refused", []float32{0, 0}, "rome visit", false, "rome"},
		{"vector again", []float32{0, 1}, "oslo fjord", true, "oslo"},
	}
	for _, tc := range tests {
		m.Text = tc.text
		if err := s.Put(m, tc.vec); err != nil {
			t.Fatalf("%s: Put: %v", tc.name, err)
		}
		if s.Vec.Has("a") != tc.wantVec || s.Lex.Len() != 1 || s.Order.Source("a") != "s" {
			t.Fatalf("%s: vector %v, %d lexical, source %q", tc.name, s.Vec.Has("a"), s.Lex.Len(), s.Order.Source("a"))
		}
		if hits := s.Lex.Search(tc.wantTerm, 5); len(hits) != 1 {
			t.Fatalf("%s: %q finds %v", tc.name, tc.wantTerm, hits)
		}
	}
	if s.Bytes() <= 0 {
		t.Errorf("Bytes = %d for a non-empty set", s.Bytes())
	}
	s.Remove("a")
	if s.Vec.Has("a") || s.Lex.Len() != 0 || s.Order.Source("a") != "" {
		t.Fatalf("after Remove: vector %v, %d lexical, source %q", s.Vec.Has("a"), s.Lex.Len(), s.Order.Source("a"))
	}
}

// TestNoVectors: without a dimension a Set has no vector index and
// ignores vectors.
func TestNoVectors(t *testing.T) {
	s, err := New(Config{BM25: bm25.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(memory.Memory{ID: "a", Text: "x"}, []float32{1}); err != nil || s.Vec != nil {
		t.Fatalf("Put: %v, Vec %v", err, s.Vec)
	}
}
