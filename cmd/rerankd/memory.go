package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store"
)

// memoryFlags configure the memory API of `rerankd serve`.
type memoryFlags struct {
	store, embedModel string
	vectorDim         int
	// ortLib, tokenizer, threads: copied from the serve flags.
	ortLib, tokenizer string
	threads           int
}

func defineMemoryFlags(fs *flag.FlagSet) *memoryFlags {
	m := &memoryFlags{}
	fs.StringVar(&m.store, "store", defaultStorePath(), "memory store file (bbolt); \"none\" disables the memory API")
	fs.IntVar(&m.vectorDim, "vector-dim", 0, "dimension of client-supplied memory vectors (0: no vector index, or the --embed-model's)")
	fs.StringVar(&m.embedModel, "embed-model", "", "Qwen3-Embedding-style ONNX folder: memories and queries are embedded for hybrid search")
	return m
}

// defaultStorePath is $RERANKD_DATA/memories.db, else
// $XDG_DATA_HOME/rerankd/memories.db, else ~/.local/share/rerankd/memories.db:
// memories are data, not cache, so they do not live under cacheDir.
func defaultStorePath() string { return filepath.Join(paths.DataDir(), "memories.db") }

// openMemory opens the store and starts rebuilding its indexes in the
// background (searches scan the store until BM25 is built); progress goes
// to the log every few seconds. It returns nil, nil when disabled.
func openMemory(m *memoryFlags, log *slog.Logger, stderr io.Writer) (*retrieval.Engine, func(), error) {
	if m.store == "none" || m.store == "" {
		return nil, func() {}, nil
	}
	if m.vectorDim < 0 {
		return nil, nil, fmt.Errorf("%w: --vector-dim %d must be >= 0", errUsage, m.vectorDim)
	}
	if err := os.MkdirAll(filepath.Dir(m.store), 0o700); err != nil {
		return nil, nil, fmt.Errorf("memory store: %w", err)
	}
	st, err := store.Open(m.store, store.Options{Dimension: m.vectorDim})
	if err != nil {
		// The store's error says why (locked by another process, damaged,
		// not a file); only the way out is added here.
		return nil, nil, fmt.Errorf("memory store: %w (use --store to pick another file, or --store none)", err)
	}
	cfg := retrieval.DefaultConfig()
	cfg.Dim = m.vectorDim
	var emb retrieval.Embedder
	closeEmb := func() {}
	if m.embedModel != "" {
		eo := model.DefaultEmbedderOptions()
		eo.RuntimeLib, eo.Tokenizer, eo.Session.IntraOpThreads = m.ortLib, m.tokenizer, m.threads
		e, err := model.OpenEmbedder(m.embedModel, eo)
		if err != nil {
			_ = st.Close()
			return nil, nil, fmt.Errorf("--embed-model %s: %w", m.embedModel, err)
		}
		emb, closeEmb = e, func() { _ = e.Close() }
		if m.vectorDim != 0 && m.vectorDim != e.Dim() {
			closeEmb()
			_ = st.Close()
			return nil, nil, fmt.Errorf("%w: --vector-dim %d but --embed-model gives %d-dimensional vectors", errUsage, m.vectorDim, e.Dim())
		}
		cfg.Dim = 0 // taken from the embedder
	}
	var last time.Time
	cfg.Progress = func(phase string, done, total int) {
		if total > 0 && (time.Since(last) > 2*time.Second || done == total) {
			last = time.Now()
			log.Info("indexing memories", "phase", phase, "done", done, "total", total)
		}
	}
	e, err := retrieval.New(st, emb, cfg)
	if err != nil {
		closeEmb()
		_ = st.Close()
		return nil, nil, fmt.Errorf("memory store: %w", err)
	}
	e.Start()
	go func() {
		if err := e.Wait(context.Background()); err != nil {
			log.Error("memory index build skipped damaged records (they are not searchable); stop rerankd and run `rerankd store check`", "err", err)
		}
	}()
	fmt.Fprintf(stderr, "memory store %s (vector dimension %d, embedder %q)\n", m.store, e.Dim(), m.embedModel)
	return e, func() {
		_ = e.Close()
		closeEmb()
		if err := st.Close(); err != nil {
			log.Error("closing memory store", "err", err)
		}
	}, nil
}
