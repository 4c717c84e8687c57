package retrieval

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Embedder turns texts into vectors of dimension Dim. isQuery selects the
// query side of asymmetric models (an instruction prefix for queries).
// model.Embedder (ONNX) and the retrieval/embed helpers satisfy it.
type Embedder interface {
	Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error)
	Dim() int
}

// Engine indexes the memories of a store and retrieves candidates from
// them. It is safe for concurrent use. Create it with New, start the
// start-up build with Start, and Close it before closing the store.
type Engine struct {
	st  *store.Store
	emb Embedder // nil: vectors only from clients (if dim > 0)
	cfg Config
	dim int // 0: no vector index

	mu     sync.RWMutex
	spaces map[string]*space

	closed   atomic.Bool
	building atomic.Bool
	built    chan struct{} // closed when the start-up build ends
	buildErr error         // set before built is closed
	stopOnce sync.Once
	stop     chan struct{}
}

// space is one namespace's indexes. mu serialises its writes, so the
// store and the indexes see one memory's writes in the same order; reads
// of the indexes need no lock of their own (the indexes are concurrent).
type space struct {
	mu  sync.Mutex
	cur atomic.Pointer[indexes] // swapped whole by a repair

	lexReady, vecReady atomic.Bool
	// touched holds IDs written since the start-up build began; the build
	// skips them. nil once both phases are done.
	touched map[string]struct{}
	// dirty is set when an index update failed after a durable store write;
	// Check rebuilds such a namespace.
	dirty atomic.Bool
}

// indexes is one namespace's index pair.
type indexes struct {
	lex *bm25.Index
	vec VectorIndex // nil when the engine has no vector dimension
}

// ix returns the current indexes; load once per operation.
func (sp *space) ix() *indexes { return sp.cur.Load() }

// New returns an Engine over st. emb may be nil. The engine starts with
// empty, not-ready indexes for the namespaces already in the store: until
// Start's build reaches them, searches there use the scan level.
func New(st *store.Store, emb Embedder, cfg Config) (*Engine, error) {
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
	e := &Engine{st: st, emb: emb, cfg: cfg, dim: dim, spaces: map[string]*space{},
		built: make(chan struct{}), stop: make(chan struct{})}
	names, err := st.Namespaces()
	if err != nil {
		return nil, fmt.Errorf("retrieval.New: %w", err)
	}
	for _, ns := range names {
		sp, err := e.newSpace()
		if err != nil {
			return nil, err
		}
		sp.touched = map[string]struct{}{}
		sp.lexReady.Store(false)
		sp.vecReady.Store(dim == 0) // no vector phase without a dimension
		e.spaces[ns] = sp
	}
	return e, nil
}

// newSpace returns empty indexes, marked ready (a namespace created after
// start has nothing to rebuild).
func (e *Engine) newSpace() (*space, error) {
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

// newIndexes returns an empty index pair.
func (e *Engine) newIndexes() (*indexes, error) {
	lex, err := bm25.New(e.cfg.BM25)
	if err != nil {
		return nil, err
	}
	ix := &indexes{lex: lex}
	if e.dim > 0 {
		if ix.vec, err = e.cfg.newVectorIndex(e.dim); err != nil {
			return nil, fmt.Errorf("retrieval: vector index: %w", err)
		}
	}
	return ix, nil
}

// space returns ns's indexes, creating them when create is set.
func (e *Engine) space(ns string, create bool) (*space, error) {
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
	e.spaces[ns] = sp
	return sp, nil
}

// Dim is the vector dimension (0: no vector index).
func (e *Engine) Dim() int { return e.dim }

// HasEmbedder reports whether the engine embeds texts itself.
func (e *Engine) HasEmbedder() bool { return e.emb != nil }

// Store returns the underlying store.
func (e *Engine) Store() *store.Store { return e.st }

// Ready reports whether the start-up build has finished.
func (e *Engine) Ready() bool {
	select {
	case <-e.built:
		return true
	default:
		return false
	}
}

// Wait blocks until the start-up build ends or ctx is done, and returns the
// build's error.
func (e *Engine) Wait(ctx context.Context) error {
	select {
	case <-e.built:
		return e.buildErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops a running build and waits for it. It does not close the
// store, which the caller owns.
func (e *Engine) Close() error {
	e.closed.Store(true)
	e.stopOnce.Do(func() { close(e.stop) })
	if e.building.Load() {
		<-e.built
	}
	return nil
}

// Stats describes one namespace's indexes.
type Stats struct {
	Namespace string `json:"namespace"`
	// Indexed is the number of memories in the BM25 index.
	Indexed int `json:"indexed"`
	// Vectors is the number of memories in the vector index.
	Vectors int `json:"vectors"`
	// Ready says both indexes are built.
	Ready bool `json:"ready"`
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
	st.Indexed = ix.lex.Len()
	if ix.vec != nil {
		st.Vectors = ix.vec.Len()
	}
	st.Ready = sp.lexReady.Load() && sp.vecReady.Load()
	return st
}
