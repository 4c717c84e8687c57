package bolt

import (
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store/storetest"
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

// The storetest suite's fixtures, so that bolt's own tests build and
// compare memories exactly as the conformance suite does.
var (
	mem      = storetest.Mem
	vec      = storetest.Vec
	equalMem = storetest.EqualMem
	equalVec = storetest.EqualVec
)
