package bolt

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
)

func openTemp(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rerankd.db")
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

func mem(ns, id string) memory.Memory {
	return memory.Memory{
		ID: id, Namespace: ns, Text: "text of " + id,
		Time:     time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC),
		Source:   "/work/" + ns,
		Metadata: map[string]string{"kind": "fact"},
	}
}

func vec(seed, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(seed*1000+i) / 7
	}
	return v
}

func equalMem(t testing.TB, got, want memory.Memory) {
	t.Helper()
	want = want.Normalize()
	if got.ID != want.ID || got.Namespace != want.Namespace || got.Text != want.Text ||
		!got.Time.Equal(want.Time) || got.Source != want.Source ||
		got.SchemaVersion != want.SchemaVersion || fmt.Sprint(got.Metadata) != fmt.Sprint(want.Metadata) {
		t.Fatalf("memory mismatch:\n got %+v\nwant %+v", got, want)
	}
}

func equalVec(t testing.TB, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("vector len %d, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("vector[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}
