package bolt_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/retrieval/store/storetest"
)

// TestConformance runs the store.Backend conformance suite against the
// bbolt store: each subtest gets a new file in its own temporary folder,
// and Reopen closes the file and opens it again with the same options.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	opts := map[*bolt.Store]bolt.Options{} // what each open store was opened with
	openAt := func(t *testing.T, path string, o bolt.Options) store.Backend {
		t.Helper()
		s, err := bolt.Open(path, o)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		mu.Lock()
		opts[s] = o
		mu.Unlock()
		return s
	}
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T, dim int) store.Backend {
			return openAt(t, filepath.Join(t.TempDir(), "rerankd.db"), bolt.Options{Dimension: dim, NoSync: true})
		},
		Reopen: func(t *testing.T, b store.Backend) store.Backend {
			s := b.(*bolt.Store)
			path := s.Path()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			mu.Lock()
			o := opts[s]
			mu.Unlock()
			return openAt(t, path, o)
		},
	})
}
