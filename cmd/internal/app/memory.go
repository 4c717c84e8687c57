package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/retrieval"
)

// CJKModeNames lists the --analyzer values, the default first.
func CJKModeNames() string {
	names := make([]string, 0, len(lexical.CJKModes()))
	for _, m := range lexical.CJKModes() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// memoryAnalyzer resolves --analyzer; a gse mode loads its dictionary here
// (seconds, once), before the server answers.
func memoryAnalyzer(mode string) (*lexical.Analyzer, error) {
	m, err := lexical.ParseCJKMode(mode)
	if err != nil {
		return nil, fmt.Errorf("%w: --analyzer: %w", cli.ErrUsage, err)
	}
	an, err := lexical.NewAnalyzer(m)
	if err != nil {
		if !gseLinked {
			return nil, fmt.Errorf("%w: --analyzer %s: this rerankd was built without the gse segmenter (go build -tags gse ./cmd/rerankd links it): %w", cli.ErrUsage, m, err)
		}
		return nil, fmt.Errorf("--analyzer %s: %w", m, err)
	}
	return an, nil
}

// gseLinked is set by gse.go, in binaries built with -tags gse.
var gseLinked bool

// configFlags names the flag each Config field that Validate checks is
// set from, so that a refused value is reported by the flag's name.
var configFlags = map[string]string{
	"Dim":                       "--vector-dim",
	"Owner.SnapshotIdle":        "--snapshot-idle",
	"Follow.SnapshotIdle":       "--snapshot-idle",
	"Owner.BackfillBatch":       "--backfill-batch",
	"Follow.CatchUp":            "--catch-up",
	"Follow.Poll":               "--follow-poll",
	"Follow.TombstoneRetention": "--tombstone-retention",
	"Follow.IndexMemory":        "--index-memory",
}

// flagProblems restates the problems retrieval.Config.Validate found,
// naming the flag a refused field came from, each once.
func flagProblems(err error) []string {
	var msgs []string
	for _, p := range retrieval.Problems(err) {
		msg := p.Error()
		var fe *retrieval.FieldError
		if errors.As(p, &fe) && configFlags[fe.Field] != "" {
			msg = fmt.Sprintf("%s %v must be %s", configFlags[fe.Field], fe.Value, fe.Want)
		}
		if !slices.Contains(msgs, msg) {
			msgs = append(msgs, msg)
		}
	}
	return msgs
}

// snapshotDirFor resolves --snapshot-dir against --store: empty means
// next to the store file, "none" means no snapshots ("").
func snapshotDirFor(storePath, flagValue string) string {
	switch flagValue {
	case "none":
		return ""
	case "":
		return storePath + ".snapshots"
	}
	return flagValue
}

// DefaultStorePath is $RERANKD_DATA/memories.db, else
// $XDG_DATA_HOME/rerankd/memories.db, else ~/.local/share/rerankd/memories.db:
// memories are data, not cache, so they do not live under cacheDir.
func DefaultStorePath() string { return filepath.Join(paths.DataDir(), "memories.db") }

// retrieval resolves m into the memory service's configuration (without
// its store, embedder, analyzer or logger), naming the flag of each
// refused value.
func (m MemoryConfig) retrieval() (retrieval.Config, error) {
	cfg := retrieval.DefaultConfig()
	if m.Store == "none" || m.Store == "" {
		if n, err := ParseBytes(m.IndexMemory); err != nil || n != 0 {
			return cfg, errors.New("--index-memory bounds a replica's indexes: it needs a postgres:// --store, and --store is none")
		}
		return cfg, nil
	}
	var errs []string
	loc, err := ParseStoreLocation("--store", m.Store)
	if err != nil {
		errs = append(errs, err.Error())
	}
	if _, err := lexical.ParseCJKMode(m.Analyzer); err != nil {
		errs = append(errs, "--analyzer: "+err.Error())
	}
	cfg.Dim = m.VectorDim
	// A shared store keeps the snapshots itself; "none" still means none.
	cfg.Follow.SharedSnapshots = m.SnapshotDir != "none"
	if loc.Kind != StorePostgres {
		cfg.Owner.SnapshotDir = snapshotDirFor(m.Store, m.SnapshotDir)
	}
	cfg.Owner.SnapshotIdle, cfg.Follow.SnapshotIdle = m.SnapshotIdle, m.SnapshotIdle
	cfg.Owner.Backfill, cfg.Owner.BackfillBatch = m.Backfill, m.BackfillBatch
	cfg.Follow.CatchUp, cfg.Follow.Poll, cfg.Follow.TombstoneRetention = m.CatchUp, m.Poll, m.TombstoneRetention
	if cfg.Follow.IndexMemory, err = ParseBytes(m.IndexMemory); err != nil {
		errs = append(errs, "--index-memory: "+err.Error())
	} else if cfg.Follow.IndexMemory != 0 && loc.Kind != StorePostgres {
		errs = append(errs, "--index-memory bounds a replica's indexes: it needs a postgres:// --store")
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, flagProblems(err)...)
	}
	if len(errs) > 0 {
		return cfg, errors.New(strings.Join(errs, "; "))
	}
	return cfg, nil
}

// openMemory opens the store and starts rebuilding its indexes in the
// background (searches scan the store until BM25 is built); progress goes
// to the log every few seconds. It returns nil, nil when disabled. The
// embedder runs with the reranker's runtime, tokenizer and threads; the
// service reranks as rr says, with the scorer handed down by Build.
func openMemory(c Config, shared retrieval.Embedder, rr retrieval.Reranking, log *slog.Logger, notices io.Writer) (*retrieval.Service, func(), error) {
	m := c.Memory
	if m.Store == "none" || m.Store == "" {
		return nil, func() {}, nil
	}
	cfg, err := m.retrieval()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	an, err := memoryAnalyzer(m.Analyzer)
	if err != nil {
		return nil, nil, err
	}
	cfg.BM25.Analyzer = an
	cfg.Logger = log
	cfg.Rerank = rr
	st, where, err := OpenStore("--store", m.Store, m.VectorDim, log)
	if err != nil {
		return nil, nil, err
	}
	var emb retrieval.Embedder
	closeEmb := func() {}
	switch {
	case shared != nil:
		// The served embedder's queue (embed.go): one model, one bound.
		emb = shared
		if m.VectorDim != 0 && m.VectorDim != emb.Dim() {
			_ = st.Close()
			return nil, nil, fmt.Errorf("%w: --vector-dim %d but --embed-model gives %d-dimensional vectors", cli.ErrUsage, m.VectorDim, emb.Dim())
		}
		cfg.Dim = 0 // taken from the embedder
	case m.EmbedModel != "":
		eo := model.DefaultEmbedderOptions()
		eo.RuntimeLib, eo.Tokenizer, eo.Session.IntraOpThreads = c.Model.RuntimeLib, c.Model.Tokenizer, c.Model.Threads
		eo.EncoderTokenizer = c.Tuning.EncoderTokenizer
		e, err := model.OpenEmbedder(m.EmbedModel, eo)
		if err != nil {
			_ = st.Close()
			return nil, nil, fmt.Errorf("--embed-model %s: %w", m.EmbedModel, err)
		}
		emb, closeEmb = e, func() { _ = e.Close() }
		if m.VectorDim != 0 && m.VectorDim != e.Dim() {
			closeEmb()
			_ = st.Close()
			return nil, nil, fmt.Errorf("%w: --vector-dim %d but --embed-model gives %d-dimensional vectors", cli.ErrUsage, m.VectorDim, e.Dim())
		}
		cfg.Dim = 0 // taken from the embedder
	}
	var last time.Time // the build and then the back-fill call Progress from one goroutine
	cfg.Progress = func(phase string, done, total int) {
		if total > 0 && (time.Since(last) > 2*time.Second || done == total) {
			last = time.Now()
			msg := "indexing memories"
			if phase == "backfill" {
				msg = "embedding memories stored without a vector"
			}
			log.Info(msg, "phase", phase, "done", done, "total", total)
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
	fmt.Fprintf(notices, "memory store %s (analyzer %s, vector dimension %d, embedder %q, index snapshots %s)\n", where, an.Mode(), e.Dim(), m.EmbedModel, e.SnapshotsAt())
	return e, func() {
		// Close saves the vector index snapshots; without them the next
		// start rebuilds, so a failure is worth a line, not an exit code.
		if err := e.Close(); err != nil {
			log.Warn("closing the memory service", "err", err)
		}
		closeEmb()
		if err := st.Close(); err != nil {
			log.Error("closing memory store", "err", err)
		}
	}, nil
}
