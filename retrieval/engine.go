package retrieval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Embedder turns texts into vectors of dimension Dim. isQuery selects the
// query side of asymmetric models (an instruction prefix for queries).
// model.Embedder (ONNX) and the retrieval/embed helpers satisfy it.
type Embedder interface {
	Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error)
	Dim() int
}

// Store is what the engine needs of a memory store. Both backends meet it:
// *bolt.Store (bbolt) and pgstore.Store (PostgreSQL); a store that also
// implements store.Shared is shared with other processes, and the engine
// follows it (see follow.go).
type Store interface {
	Namespaces() ([]string, error)
	Count(ns string) (int, error)
	Page(ns, after string, limit int, withVectors bool) ([]store.Record, string, error)
	GetMany(ns string, ids []string, withVectors bool) ([]store.Record, error)
	PutBatch(items []store.Item) error
	Delete(ns, id string) error
	PutVectorsIf(ns string, vecs map[string][]float32, keep func(store.Record) bool) ([]string, error)
	VectorGen(ns string) (store.VectorGen, error)
	VectorGens() (map[string]store.VectorGen, error)
	BumpVectorGen(ns string) (store.VectorGen, error)
}

// Engine indexes the memories of a store and retrieves candidates from
// them. It is safe for concurrent use. Create it with New, start the
// start-up build with Start, and Close it before closing the store.
//
// The Engine is the facade: it validates, embeds, writes to the store and
// runs the search pipeline the same way for every store, and leaves the
// namespaces' indexes to its keeper (keeper.go): the owner for a store of
// this process alone, the follower for a shared one.
type Engine struct {
	core
	k keeper
}

// core is the state the facade and its keeper share.
type core struct {
	st     Store
	emb    Embedder // nil: vectors only from clients (if dim > 0)
	cfg    Config
	dim    int  // 0: no vector index
	shared bool // st is shared with other processes

	mu     sync.RWMutex
	spaces map[string]*space

	log *slog.Logger
	// snapIndex is the configuration of the vector indexes the engine
	// builds, which a snapshot must match.
	snapIndex hnsw.Config

	closed   atomic.Bool
	building atomic.Bool
	built    chan struct{} // closed when the start-up build ends
	buildErr error         // set before built is closed
	// afterBuild is closed when the snapshots after the build are saved,
	// backfilled when the back-fill ends (or was not run); both are
	// closed by the background goroutine, also when it is stopped.
	afterBuild, backfilled chan struct{}
	bg                     sync.WaitGroup // background goroutines
	ctx                    context.Context
	cancel                 context.CancelFunc // cancels ctx: stops embedder calls
	closeOnce              sync.Once
	stop                   chan struct{}
	closeErr               error
}

// space is one namespace's indexes. mu serialises its writes, so the
// store and the indexes see one memory's writes in the same order; reads
// of the indexes need no lock of their own (the indexes are concurrent).
type space struct {
	mu  ctxMutex
	cur atomic.Pointer[index.Set] // swapped whole by a repair

	lexReady, vecReady atomic.Bool
	// dirty is set when an index update failed after a durable store write,
	// or the build of the namespace did not finish; the owner's Check
	// rebuilds such a namespace, the follower drops it, and it is not
	// snapshotted.
	dirty atomic.Bool

	// own is the owner's state of the namespace (owner.go), follow the
	// follower's (follow.go); the other is nil.
	own    *ownState
	follow *followState
}

// ownState is what the owner keeps of a namespace beside its indexes.
type ownState struct {
	// touched holds IDs written since the start-up build began; the build
	// skips them. nil once both phases are done. Guarded by space.mu.
	touched map[string]struct{}
	// atStart: the namespace was in the store at New (immutable).
	atStart bool
	// startGen is the store's vector generation of the namespace at New,
	// before any write through this engine: a snapshot saved at it holds
	// exactly the vectors the store had then.
	startGen store.VectorGen
	// snapGen is the generation of the namespace's snapshot file, zero
	// when none is known; guarded by mu.
	snapGen store.VectorGen
	// lastWrite is when a write last changed the namespace (unix nanos), 0
	// when nothing changed since its last snapshot; for SnapshotIdle.
	lastWrite atomic.Int64
	// info says where the vector index came from, for Stats.
	info atomic.Pointer[vecInfo]
	// Back-fill counters, for Stats.
	backfilled, backfillFailed atomic.Int64
}

// vecInfo is how a namespace's vector index was made at start.
type vecInfo struct{ source, miss string }

// ix returns the current indexes; load once per operation.
func (sp *space) ix() *index.Set { return sp.cur.Load() }

// New returns an Engine over st. emb may be nil. The engine starts with
// empty, not-ready indexes for the namespaces already in the store: until
// Start's build reaches them, searches there use the scan level.
func New(st Store, emb Embedder, cfg Config) (*Engine, error) {
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
	e := &Engine{core: core{st: st, emb: emb, cfg: cfg, dim: dim, spaces: map[string]*space{},
		built: make(chan struct{}), afterBuild: make(chan struct{}), backfilled: make(chan struct{}),
		stop: make(chan struct{}), log: cfg.Logger}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.snapIndex = cfg.vectorIndex(dim)
	if f, ok := st.(store.Shared); ok {
		// Shared: nothing is built at start (namespaces are built on first
		// use), and nothing is saved beside this process: the indexes
		// follow the database.
		// Config.Owner is not used: the indexes follow the database.
		e.k, e.shared = &follower{core: &e.core, feed: f}, true
		if cfg.Owner.SnapshotDir != "" {
			e.log.Info("memory index snapshot files off: the store is shared, and keeps the snapshots itself")
		}
		if cfg.Owner.Backfill && emb != nil {
			e.log.Info("memory back-fill off: the store is shared; vectors come with each write")
		}
		return e, nil
	}
	o := &owner{core: &e.core}
	e.k = o
	if err := o.initSnapshots(); err != nil {
		return nil, err
	}
	names, err := st.Namespaces()
	if err != nil {
		return nil, fmt.Errorf("retrieval.New: %w", err)
	}
	// Read before any write through this engine can move them: a snapshot
	// at these generations is exact, and writes from now on are replayed
	// onto it (they are in touched).
	gens, err := st.VectorGens()
	if err != nil {
		return nil, fmt.Errorf("retrieval.New: %w", err)
	}
	for _, ns := range names {
		sp, err := e.newSpace()
		if err != nil {
			return nil, err
		}
		sp.own = &ownState{touched: map[string]struct{}{}, atStart: true, startGen: gens[ns]}
		sp.lexReady.Store(false)
		sp.vecReady.Store(dim == 0) // no vector phase without a dimension
		e.spaces[ns] = sp
	}
	return e, nil
}

// initSnapshots decides whether the engine keeps snapshots: only with a
// SnapshotDir and a vector dimension.
// A SnapshotDir that exists but is not a directory is a configuration
// error; anything else wrong with it is found, logged and survived later.
func (e *owner) initSnapshots() error {
	dir := e.cfg.Owner.SnapshotDir
	if dir == "" || e.dim == 0 {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("retrieval.New: SnapshotDir %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.log.Warn("memory index snapshots: cannot use the directory; indexes will be rebuilt at start", "dir", dir, "err", err)
	}
	return nil
}

// newSpace returns empty indexes, marked ready (a namespace created after
// start has nothing to rebuild).
func (e *core) newSpace() (*space, error) {
	ix, err := e.newIndexes()
	if err != nil {
		return nil, err
	}
	sp := &space{}
	sp.cur.Store(ix)
	sp.lexReady.Store(true)
	sp.vecReady.Store(true)
	return sp, nil
}

// newIndexes returns a namespace's empty indexes.
func (e *core) newIndexes() (*index.Set, error) {
	cfg := index.Config{BM25: e.cfg.BM25, SpeakerKey: e.cfg.SpeakerKey}
	if e.dim > 0 {
		cfg.Vectors = e.snapIndex
	}
	return index.New(cfg)
}

// space returns ns's indexes, creating them when create is set.
func (e *core) space(ns string, create bool) (*space, error) { return e.spaceWith(ns, create, nil) }

// spaceWith is space, with init called on a space it creates before
// anyone else sees it.
func (e *core) spaceWith(ns string, create bool, init func(*space)) (*space, error) {
	e.mu.RLock()
	sp := e.spaces[ns]
	e.mu.RUnlock()
	if sp != nil || !create {
		return sp, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sp = e.spaces[ns]; sp != nil {
		return sp, nil
	}
	sp, err := e.newSpace()
	if err != nil {
		return nil, err
	}
	if init != nil {
		init(sp)
	}
	e.spaces[ns] = sp
	return sp, nil
}

// Dim is the vector dimension (0: no vector index).
func (e *Engine) Dim() int { return e.dim }

// HasEmbedder reports whether the engine embeds texts itself.
func (e *Engine) HasEmbedder() bool { return e.emb != nil }

// Ready reports whether the start-up build has finished.
func (e *core) Ready() bool {
	select {
	case <-e.built:
		return true
	default:
		return false
	}
}

// Wait blocks until the start-up build ends or ctx is done, and returns the
// build's error.
func (e *core) Wait(ctx context.Context) error {
	select {
	case <-e.built:
		return e.buildErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the start-up build, the back-fill and the snapshot saver,
// waits for them, then saves the snapshots of the namespaces whose
// vectors changed since theirs (when Config.Owner.SnapshotDir is set).
// Its error is only about those snapshots: nothing is lost without them,
// the next start rebuilds. It does not close the store, which the caller owns and
// must close after.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock() // sharedSpace reads closed under e.mu: no build starts after this
		e.closed.Store(true)
		e.mu.Unlock()
		close(e.stop) // tells the background goroutines to stop
		e.cancel()
		e.bg.Wait()
		e.closeErr = e.k.close()
	})
	return e.closeErr
}

// Stats describes one namespace's indexes.
type Stats struct {
	Namespace string
	// Indexed is the number of memories in the BM25 index.
	Indexed int
	// Vectors is the number of memories in the vector index.
	Vectors int
	// Ready says both indexes are built.
	Ready bool
	// VectorSource says where the vector index came from at start:
	// "snapshot" (loaded from Config.Owner.SnapshotDir), "rebuild" (built from
	// the store), or "" (not built yet, a namespace created since start,
	// or no vector index).
	VectorSource string
	// SnapshotMiss says why a rebuilt namespace's snapshot was not used
	// ("missing: …", "stale: …", "corrupt: …", "dimension: …", "config:
	// …"), when snapshots are on.
	SnapshotMiss string
	// Backfilled counts memories the back-fill gave a vector since start;
	// BackfillFailed those whose embedding failed (they stay lexical-only
	// until a later start tries again).
	Backfilled     int
	BackfillFailed int
}

// Stats returns the state of ns's indexes (zero values for an unknown ns).
func (e *Engine) Stats(ns string) Stats {
	sp, _ := e.space(ns, false)
	st := Stats{Namespace: ns}
	if sp == nil {
		st.Ready = true
		return st
	}
	ix := sp.ix()
	st.Indexed = ix.Lex.Len()
	if ix.Vec != nil {
		st.Vectors = ix.Vec.Len()
	}
	st.Ready = sp.lexReady.Load() && sp.vecReady.Load()
	e.k.describe(sp, &st)
	return st
}

// Totals sums Stats over the namespaces this engine holds indexes of, for
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
func (e *Engine) Totals() Totals {
	e.mu.RLock()
	names := make([]string, 0, len(e.spaces))
	for ns := range e.spaces {
		names = append(names, ns)
	}
	e.mu.RUnlock()
	var t Totals
	for _, ns := range names {
		s := e.Stats(ns)
		t.Namespaces++
		if !s.Ready {
			t.Building++
		}
		t.Indexed += s.Indexed
		t.Vectors += s.Vectors
		switch s.VectorSource {
		case "snapshot":
			t.FromSnapshot++
		case "rebuild":
			t.Rebuilt++
		}
		if s.SnapshotMiss != "" {
			t.SnapshotMisses++
		}
		t.Backfilled += s.Backfilled
		t.BackfillFailed += s.BackfillFailed
	}
	return t
}
