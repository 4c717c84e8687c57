package pgstore

import (
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/storetest"
)

// TestConformance runs the store.Backend suite on a fresh database per
// subtest; Reopen is Close and Open of the same URL.
func TestConformance(t *testing.T) {
	urls := map[store.Backend]string{}
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T, dim int) store.Backend {
			url := newDB(t)
			s := open(t, url, Options{Dimension: dim})
			urls[s] = url
			return s
		},
		Reopen: func(t *testing.T, b store.Backend) store.Backend {
			_ = b.Close()
			s := open(t, urls[b], Options{Dimension: b.(*Store).opts.Dimension})
			urls[s] = urls[b]
			return s
		},
	})
}

// TestSharedConformance runs the store.Shared suite (feed, Listen,
// snapshots, purge, ping, after Close) on a fresh database per subtest;
// Attach opens a second Store on the same database, as another replica
// would.
func TestSharedConformance(t *testing.T) {
	urls := map[store.Shared]string{}
	storetest.RunShared(t, storetest.SharedOpener{
		Open: func(t *testing.T, dim int) store.Shared {
			url := newDB(t)
			s := open(t, url, Options{Dimension: dim})
			urls[s] = url
			return s
		},
		Attach: func(t *testing.T, s store.Shared) store.Shared {
			return open(t, urls[s], Options{Dimension: s.(*Store).opts.Dimension})
		},
	})
}
