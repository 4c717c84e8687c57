package retrieval

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/follow"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/owner"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Embedder turns texts into vectors of dimension Dim. isQuery selects the
// query side of asymmetric models (an instruction prefix for queries).
// model.Embedder (ONNX) and the retrieval/embed helpers satisfy it.
type Embedder = keep.Embedder

// Store is what the service needs of a memory store. Both backends meet it:
// *bolt.Store (bbolt) and pgstore.Store (PostgreSQL); a store that also
// implements store.Shared is shared with other processes, and the service
// follows it (retrieval/follow).
type Store = keep.Store

// Stats describes one namespace's indexes.
type Stats = keep.Stats

// FollowStats counts what a shared-store service did since it started.
type FollowStats = keep.FollowStats

type (
	// CheckReport is the result of Check.
	CheckReport = keep.CheckReport
	// Disagreement is one namespace whose indexes did not match the store.
	Disagreement = keep.Disagreement
)

// Service indexes the memories of a store and retrieves candidates from
// them. It is safe for concurrent use. Create it with New, start the
// start-up build with Start, and Close it before closing the store.
//
// The Service is the facade: it validates, embeds, writes to the store and
// runs the search pipeline the same way for every store, and leaves the
// namespaces' indexes to its keeper (keep.Keeper): the owner for a store
// of this process alone, the follower for a shared one.
type Service struct {
	b   *keep.Base
	k   keep.Keeper
	cfg Config

	building  atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// New returns a Service over st. emb may be nil. Over a store of this
// process alone the service starts with empty, not-ready indexes for the
// namespaces already in the store: until Start's build reaches them,
// searches there use the scan level.
func New(st Store, emb Embedder, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("retrieval.New: nil store")
	}
	dim := cfg.Dim
	if emb != nil {
		if d := emb.Dim(); cfg.Dim != 0 && cfg.Dim != d {
			return nil, fmt.Errorf("retrieval.New: Config.Dim %d but the embedder gives %d-dimensional vectors", cfg.Dim, d)
		} else if d < 1 {
			return nil, fmt.Errorf("retrieval.New: embedder reports dimension %d", d)
		}
		dim = emb.Dim()
	}
	b := keep.NewBase(st, emb, dim, keep.Common{
		Index:    index.Config{BM25: cfg.BM25, SpeakerKey: cfg.SpeakerKey, Vectors: cfg.HNSW},
		PageSize: cfg.PageSize,
		Progress: cfg.Progress,
	}, cfg.Logger)
	k, err := newKeeper(b, st, cfg)
	if err != nil {
		return nil, err
	}
	return &Service{b: b, k: k, cfg: cfg}, nil
}

// newKeeper picks the keeper of st's indexes, the one place that tells
// the two kinds of store apart: a store that implements store.Shared is
// followed, any other is owned.
func newKeeper(b *keep.Base, st Store, cfg Config) (keep.Keeper, error) {
	f, shared := st.(store.Shared)
	if !shared {
		return owner.New(b, cfg.Owner)
	}
	// Nothing is built at start (namespaces are built on first use), and
	// nothing is saved beside this process: the indexes follow the
	// database, so Config.Owner is not used.
	if cfg.Owner.SnapshotDir != "" {
		b.Logger().Info("memory index snapshot files off: the store is shared, and keeps the snapshots itself")
	}
	if cfg.Owner.Backfill && b.Embedder() != nil {
		b.Logger().Info("memory back-fill off: the store is shared; vectors come with each write")
	}
	return follow.New(b, f, cfg.Follow), nil
}

// Start begins the keeper's background work: over a store of this process
// alone, the start-up build of every namespace that was in the store at
// New (BM25 first, then the vector indexes, from a snapshot where a
// current one exists), then snapshots and the back-fill, until Close;
// over a shared store, following it. Start returns at once; Wait waits
// for the build. Calling Start twice panics (programmer error); after
// Close, the build ends at once with an error.
func (s *Service) Start() {
	if !s.building.CompareAndSwap(false, true) {
		panic("retrieval: Service.Start called twice")
	}
	s.k.Start()
}

// Ready reports whether the start-up build has finished.
func (s *Service) Ready() bool { return s.b.Ready() }

// Wait blocks until the start-up build ends or ctx is done, and returns the
// build's error.
func (s *Service) Wait(ctx context.Context) error { return s.b.Wait(ctx) }

// Close stops the keeper's background work (the start-up build, the
// back-fill, the snapshot saver, the following of a shared store), waits
// for it, then saves the snapshots of the namespaces whose vectors changed
// since theirs (when Config.Owner.SnapshotDir is set). Its error is only
// about those snapshots: nothing is lost without them, the next start
// rebuilds. It does not close the store, which the caller owns and must
// close after.
func (s *Service) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.k.Close() })
	return s.closeErr
}

// Keeper returns the keeper of the service's indexes, for tests and tools
// that look inside (the service itself never asks which one it is).
func (s *Service) Keeper() keep.Keeper { return s.k }

// Dim is the vector dimension (0: no vector index).
func (s *Service) Dim() int { return s.b.Dim() }

// HasEmbedder reports whether the service embeds texts itself.
func (s *Service) HasEmbedder() bool { return s.b.Embedder() != nil }

// Config returns the service's configuration, defaults applied.
func (s *Service) Config() Config { return s.cfg }

// follower is what the keeper of a shared store (retrieval/follow) also
// answers; the owner of a store of this process alone does not.
type follower interface {
	FollowStats() FollowStats
	Ping(ctx context.Context) error
}

var _ follower = (*follow.Follower)(nil)

// Shared reports whether the service's store is shared with other
// processes (its indexes follow the store's change sequence).
func (s *Service) Shared() bool {
	_, ok := s.k.(follower)
	return ok
}

// Follow reports the shared-store follower's counters (zero for a store
// of this process alone).
func (s *Service) Follow() FollowStats {
	if f, ok := s.k.(follower); ok {
		return f.FollowStats()
	}
	return FollowStats{}
}

// Ping checks that a shared store can be reached; nil for a store of this
// process alone.
func (s *Service) Ping(ctx context.Context) error {
	if f, ok := s.k.(follower); ok {
		return f.Ping(ctx)
	}
	return nil
}

// SnapshotsAt says where the vector index snapshots are kept: a
// directory, "in the database", or "off".
func (s *Service) SnapshotsAt() string { return s.k.SnapshotsAt() }

// Check compares every namespace's indexes with the store and, with
// repair, rebuilds each namespace that disagrees. It waits for the
// start-up build first. Writes to a namespace wait while it is checked. A
// shared store's indexes cannot be checked this way (other processes
// write meanwhile): it returns an ErrInvalid error there.
func (s *Service) Check(ctx context.Context, repair bool) (CheckReport, error) {
	return s.k.Check(ctx, repair)
}

// Stats returns the state of ns's indexes (zero values for an unknown ns).
func (s *Service) Stats(ns string) Stats { return s.k.Stats(ns) }

// Totals sums Stats over the namespaces this service holds indexes of, for
// metrics.
type Totals struct {
	// Namespaces held, and how many of them are not built yet.
	Namespaces, Building int
	// Indexed and Vectors: memories in the BM25 and vector indexes.
	Indexed, Vectors int
	// FromSnapshot and Rebuilt: namespaces whose vector index came from a
	// snapshot file at start, or was rebuilt from the store (with a
	// snapshot miss when snapshots are on).
	FromSnapshot, Rebuilt, SnapshotMisses int
	// Backfilled and BackfillFailed: as in Stats, summed.
	Backfilled, BackfillFailed int
}

// Totals returns the sums of every held namespace's Stats.
func (s *Service) Totals() Totals {
	var t Totals
	for _, ns := range s.k.Names() {
		st := s.k.Stats(ns)
		t.Namespaces++
		if !st.Ready {
			t.Building++
		}
		t.Indexed += st.Indexed
		t.Vectors += st.Vectors
		switch st.VectorSource {
		case "snapshot":
			t.FromSnapshot++
		case "rebuild":
			t.Rebuilt++
		}
		if st.SnapshotMiss != "" {
			t.SnapshotMisses++
		}
		t.Backfilled += st.Backfilled
		t.BackfillFailed += st.BackfillFailed
	}
	return t
}
