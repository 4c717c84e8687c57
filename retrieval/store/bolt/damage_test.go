package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// TestOpenDamagedFile truncates a store at many sizes: Open must return an
// error wrapping store.ErrCorrupt or open a store whose Check is honest, never
// panic and never silently start empty.
func TestOpenDamagedFile(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	s, err := Open(orig, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var items []store.Item
	for i := range 3000 {
		items = append(items, store.Item{Memory: mem("ns", fmt.Sprintf("m%05d", i)), Vector: vec(i, 16)})
	}
	if err := s.PutBatch(items); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	raw, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, 1000, 4096, 8192, 12288, 16384, len(raw) / 4, len(raw) / 2, len(raw) - 4096} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("cut%d.db", n))
			if err := os.WriteFile(path, raw[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				if !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("error %v does not wrap store.ErrCorrupt", err)
				}
				return
			}
			defer s.Close()
			// It opened (the cut only removed unused tail pages, or bbolt
			// did not notice): then a clean Check must mean nothing is lost.
			st, err := s.Check(nil)
			if err == nil && st.Problems == 0 && st.Memories != len(items) {
				t.Fatalf("a file cut to %d of %d bytes checks clean with %d of %d memories", n, len(raw), st.Memories, len(items))
			}
		})
	}
}
