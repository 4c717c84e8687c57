package keep

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Embedder turns texts into vectors of dimension Dim. isQuery selects the
// query side of asymmetric models (an instruction prefix for queries).
type Embedder interface {
	Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error)
	Dim() int
}

// Store is what the memory service needs of a memory store. Both backends meet it:
// *bolt.Store (bbolt) and pgstore.Store (PostgreSQL); a store that also
// implements store.Shared is shared with other processes, and its keeper
// is the follower.
type Store interface {
	Namespaces() ([]string, error)
	Count(ns string) (int, error)
	Page(ns, after string, limit int, withVectors bool) ([]store.Record, string, error)
	GetMany(ns string, ids []string, withVectors bool) ([]store.Record, error)
	PutBatch(items []store.Item) error
	Delete(ns, id string) error
	DeleteNamespace(ns string) (int, error)
	PutVectorsIf(ns string, vecs map[string][]float32, keep func(store.Record) bool) ([]string, error)
	VectorGen(ns string) (store.VectorGen, error)
	VectorGens() (map[string]store.VectorGen, error)
	BumpVectorGen(ns string) (store.VectorGen, error)
}

// Common is what both keepers take of the memory service's configuration.
type Common struct {
	// Index is the configuration of every namespace's indexes; its
	// Vectors.Dim is the memory service's dimension (0: no vector index).
	Index index.Config
	// PageSize is how many records one store read returns.
	PageSize int
	// Progress, when set, is told of the start-up build and the
	// back-fill (retrieval.Config.Progress).
	Progress func(phase string, done, total int)
}

// Base is the state the facade and its keeper share: the store, the
// embedder, the configuration and the lifecycle (background work, the
// start-up build, Close). Its dependencies are given to NewBase and read
// through accessors; nothing outside keep changes them.
type Base struct {
	st  Store
	emb Embedder // nil: vectors only from clients (if dim > 0)
	dim int      // 0: no vector index
	cfg Common
	log *slog.Logger
	// ctx is cancelled by Shutdown: it stops embedder and store calls of
	// the background work. bg counts the background goroutines (Go).
	ctx context.Context
	bg  sync.WaitGroup

	cancel   context.CancelFunc
	stop     chan struct{}
	closed   atomic.Bool
	built    chan struct{} // closed when the start-up build ends
	buildErr error         // set before built is closed
}

// NewBase returns a Base over st; emb may be nil (vectors only from
// clients), dim 0 means no vector index, log nil discards.
func NewBase(st Store, emb Embedder, dim int, cfg Common, log *slog.Logger) *Base {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Index.Vectors.Dim = dim
	b := &Base{st: st, emb: emb, dim: dim, cfg: cfg, log: log, stop: make(chan struct{}), built: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Store is the memory store.
func (b *Base) Store() Store { return b.st }

// Embedder is the embedder; nil when vectors come only from clients.
func (b *Base) Embedder() Embedder { return b.emb }

// Dim is the vector dimension (0: no vector index).
func (b *Base) Dim() int { return b.dim }

// PageSize is how many records one store read returns.
func (b *Base) PageSize() int { return b.cfg.PageSize }

// Logger is where the keeper logs.
func (b *Base) Logger() *slog.Logger { return b.log }

// Context is the background work's context: Shutdown cancels it, which
// stops the embedder and store calls made under it.
func (b *Base) Context() context.Context { return b.ctx }

// Go runs fn in a background goroutine that Shutdown waits for. A keeper
// starts background work only while not Closed (read under the lock it
// passes to Shutdown), or from inside background work already running.
func (b *Base) Go(fn func()) {
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		fn()
	}()
}

// VectorIndex is the configuration of every vector index, which a
// snapshot must match.
func (b *Base) VectorIndex() hnsw.Config { return b.cfg.Index.Vectors }

// Progress reports build or back-fill progress, if anyone listens.
func (b *Base) Progress(phase string, done, total int) {
	if b.cfg.Progress != nil {
		b.cfg.Progress(phase, done, total)
	}
}

// Closed reports whether Shutdown has begun.
func (b *Base) Closed() bool { return b.closed.Load() }

// Stopping is closed when Shutdown begins: background loops end on it.
func (b *Base) Stopping() <-chan struct{} { return b.stop }

// Built ends the start-up build with err (nil: success).
func (b *Base) Built(err error) {
	b.buildErr = err
	close(b.built)
}

// BuildErr is the start-up build's error, once Built was called.
func (b *Base) BuildErr() error { return b.buildErr }

// Ready reports whether the start-up build has finished.
func (b *Base) Ready() bool {
	select {
	case <-b.built:
		return true
	default:
		return false
	}
}

// Wait blocks until the start-up build ends or ctx is done, and returns
// the build's error.
func (b *Base) Wait(ctx context.Context) error {
	select {
	case <-b.built:
		return b.buildErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown marks the base closed while holding fence (so that code which
// reads Closed under fence starts no background work after it), tells the
// background goroutines to stop, cancels Context and waits for every
// goroutine started by Go.
func (b *Base) Shutdown(fence sync.Locker) {
	fence.Lock()
	b.closed.Store(true)
	fence.Unlock()
	close(b.stop)
	b.cancel()
	b.bg.Wait()
}

// NewIndexes returns a namespace's empty indexes.
func (b *Base) NewIndexes() (*index.Set, error) { return index.New(b.cfg.Index) }

// Complete copies a memory's fields into its candidate, so that a result
// needs no further read of the store; vectors the index cannot use are
// left out.
func Complete(c *post.Candidate, r store.Record, dim int) {
	c.Text, c.Time, c.Source, c.Metadata = r.Memory.Text, r.Memory.Time, r.Memory.Source, r.Memory.Metadata
	if embed.Check(r.Vector, dim) == nil {
		c.Vector = r.Vector
	}
}
