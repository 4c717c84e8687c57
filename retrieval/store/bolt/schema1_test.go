package bolt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestSchemaOneStore opens a store written by the build before typed
// metadata (testdata/schema1.db: main at 1896833, string metadata, schema
// version 1) and reads every memory back unchanged, then adds typed
// metadata beside them: nothing acknowledged is lost across the change.
func TestSchemaOneStore(t *testing.T) {
	src, err := os.Open("testdata/schema1.db")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "store.db")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Count("alice"); err != nil || n != 20 {
		t.Fatalf("alice: %d memories (%v), want 20", n, err)
	}
	for i := range 20 {
		id := fmt.Sprintf("m%02d", i)
		m, err := s.Get("alice", id)
		if err != nil {
			t.Fatal(err)
		}
		want := memory.Strings(map[string]string{"kind": "fact", "n": fmt.Sprint(i), "flag": "true"})
		if m.SchemaVersion != 1 || len(m.Metadata) != 3 || m.Metadata["n"] != want["n"] || m.Metadata["flag"] != want["flag"] ||
			m.Text != fmt.Sprintf("memory number %d about paris", i) || !m.Time.Equal(time.Date(2025, 1, 1+i, 8, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: %+v", id, m)
		}
		v, err := s.Vector("alice", id)
		if i%2 == 0 && (err != nil || len(v) != 3 || v[0] != float32(i)) {
			t.Errorf("%s vector %v (%v)", id, v, err)
		}
	}
	if probs, err := s.CheckProgress(func(p store.Problem) { t.Error(p) }, nil); err != nil || probs.Problems != 0 {
		t.Fatalf("check: %+v %v", probs, err)
	}
	typed := mem("alice", "typed")
	typed.Metadata = memory.Metadata{"n": memory.Number(7), "ok": memory.Bool(true)}
	typed = typed.Normalize()
	if err := s.Put(typed, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("alice", "typed")
	if err != nil || got.Metadata["n"] != memory.Number(7) || got.Metadata["ok"] != memory.Bool(true) || got.SchemaVersion != memory.CurrentSchema {
		t.Fatalf("typed: %+v %v", got, err)
	}
}
