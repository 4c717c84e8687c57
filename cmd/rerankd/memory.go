package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/retrieval"
)

// memoryFlags configure the memory API of `rerankd serve`. The zero value
// of the snapshot and back-fill fields means: snapshots next to the store,
// saved only after the build and at shutdown; no back-fill.
type memoryFlags struct {
	store, embedModel string
	vectorDim         int
	// encoderTokenizer is no flag: serve's (serveFlags.encoderTokenizer),
	// for a BERT / XLM-R --embed-model.
	encoderTokenizer model.EncoderTokenizer
	// analyzer: the memory index's CJK analysis (lexical.CJKMode); ""
	// is lexical.DefaultCJK.
	analyzer string
	// snapshotDir: "" for <store>.snapshots, "none" for no snapshots.
	snapshotDir   string
	snapshotIdle  time.Duration
	backfill      bool
	backfillBatch int
	// indexMemory (bytes, "" or 0: no bound), catchUp and poll: the
	// shared store's follower (retrieval.Config).
	indexMemory   string
	catchUp, poll time.Duration
	// tombstones: how long a shared store keeps deletes' records (0:
	// forever).
	tombstones time.Duration
	// ortLib, tokenizer, threads: copied from the serve flags.
	ortLib, tokenizer string
	threads           int
}

func defineMemoryFlags(fs *flag.FlagSet) *memoryFlags {
	m := &memoryFlags{}
	def := retrieval.DefaultConfig()
	fs.StringVar(&m.store, "store", defaultStorePath(), "memory store: a file (bbolt, this process alone), a postgres:// URL (PostgreSQL, shared by any number of replicas; the password may also come from PGPASSWORD or a passfile), or \"none\" (no memory API)")
	fs.StringVar(&m.indexMemory, "index-memory", "0", "with a postgres:// store: bound on this replica's in-memory indexes (bytes, or with KiB/MiB/GiB/KB/MB/GB); least recently used namespaces are dropped and rebuilt on next use (0: no bound)")
	fs.DurationVar(&m.catchUp, "catch-up", def.Follow.CatchUp, "with a postgres:// store: how long a search may wait for its namespace's indexes to reach every acknowledged write (a first build included) before answering 503 with Retry-After")
	fs.DurationVar(&m.tombstones, "tombstone-retention", def.Follow.TombstoneRetention, "with a postgres:// store: how long the records of deletes are kept for replicas to follow; older ones are purged hourly, and a replica further behind rebuilds the namespace (0: kept forever)")
	fs.DurationVar(&m.poll, "follow-poll", def.Follow.Poll, "with a postgres:// store: how often to poll every namespace's change sequence (notifications usually come first)")
	fs.IntVar(&m.vectorDim, "vector-dim", 0, "dimension of client-supplied memory vectors (0: no vector index, or the --embed-model's)")
	fs.StringVar(&m.analyzer, "analyzer", string(lexical.DefaultCJK), "how memory search splits Chinese, Japanese and Korean text into terms: "+cjkModeNames()+" (gse modes need a binary built with -tags gse; see README)")
	fs.StringVar(&m.embedModel, "embed-model", "", "Qwen3-Embedding-style ONNX folder: memories and queries are embedded for hybrid search")
	fs.StringVar(&m.snapshotDir, "snapshot-dir", "", "directory of memory vector index snapshots, loaded at start instead of rebuilding (empty: STORE.snapshots next to --store; with a postgres:// store the snapshots live in the database; \"none\" disables)")
	fs.DurationVar(&m.snapshotIdle, "snapshot-idle", def.Owner.SnapshotIdle, "re-save a namespace's vector index snapshot once its writes have been quiet this long (0: only after the start-up build and at shutdown)")
	fs.BoolVar(&m.backfill, "backfill", def.Owner.Backfill, "with --embed-model, embed stored memories that have no vector (added before it was configured) in the background after start")
	fs.IntVar(&m.backfillBatch, "backfill-batch", def.Owner.BackfillBatch, "memories per embedding call during the back-fill")
	return m
}

// cjkModeNames lists the --analyzer values, the default first.
func cjkModeNames() string {
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
		return nil, fmt.Errorf("%w: --analyzer: %w", errUsage, err)
	}
	an, err := lexical.NewAnalyzer(m)
	if err != nil {
		if !gseLinked {
			return nil, fmt.Errorf("%w: --analyzer %s: this rerankd was built without the gse segmenter (go build -tags gse ./cmd/rerankd links it): %w", errUsage, m, err)
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

// flagErrors restates the problems retrieval.Config.Validate found as
// usage errors, naming the flag a refused field came from, each once.
func flagErrors(err error) error {
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
	return fmt.Errorf("%w: %s", errUsage, strings.Join(msgs, "; "))
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

// defaultStorePath is $RERANKD_DATA/memories.db, else
// $XDG_DATA_HOME/rerankd/memories.db, else ~/.local/share/rerankd/memories.db:
// memories are data, not cache, so they do not live under cacheDir.
func defaultStorePath() string { return filepath.Join(paths.DataDir(), "memories.db") }

// openMemory opens the store and starts rebuilding its indexes in the
// background (searches scan the store until BM25 is built); progress goes
// to the log every few seconds. It returns nil, nil when disabled.
func openMemory(m *memoryFlags, log *slog.Logger, stderr io.Writer) (*retrieval.Service, func(), error) {
	if m.store == "none" || m.store == "" {
		if n, err := parseBytes(m.indexMemory); err != nil || n != 0 {
			return nil, nil, fmt.Errorf("%w: --index-memory bounds a replica's indexes: it needs a postgres:// --store, and --store is none", errUsage)
		}
		return nil, func() {}, nil
	}
	loc, err := parseStoreLocation("--store", m.store)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	an, err := memoryAnalyzer(m.analyzer)
	if err != nil {
		return nil, nil, err
	}
	cfg := retrieval.DefaultConfig()
	cfg.BM25.Analyzer = an
	cfg.Dim = m.vectorDim
	cfg.Logger = log
	// A shared store keeps the snapshots itself; "none" still means none.
	cfg.Follow.SharedSnapshots = m.snapshotDir != "none"
	if loc.kind != storePostgres {
		cfg.Owner.SnapshotDir = snapshotDirFor(m.store, m.snapshotDir)
	}
	cfg.Owner.SnapshotIdle, cfg.Follow.SnapshotIdle = m.snapshotIdle, m.snapshotIdle
	cfg.Owner.Backfill, cfg.Owner.BackfillBatch = m.backfill, m.backfillBatch
	cfg.Follow.CatchUp, cfg.Follow.Poll, cfg.Follow.TombstoneRetention = m.catchUp, m.poll, m.tombstones
	if cfg.Follow.IndexMemory, err = parseBytes(m.indexMemory); err != nil {
		return nil, nil, fmt.Errorf("%w: --index-memory: %w", errUsage, err)
	}
	if cfg.Follow.IndexMemory != 0 && loc.kind != storePostgres {
		return nil, nil, fmt.Errorf("%w: --index-memory bounds a replica's indexes: it needs a postgres:// --store", errUsage)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, flagErrors(err)
	}
	st, where, err := openStore("--store", m.store, m.vectorDim, log)
	if err != nil {
		return nil, nil, err
	}
	var emb retrieval.Embedder
	closeEmb := func() {}
	if m.embedModel != "" {
		eo := model.DefaultEmbedderOptions()
		eo.RuntimeLib, eo.Tokenizer, eo.Session.IntraOpThreads = m.ortLib, m.tokenizer, m.threads
		eo.EncoderTokenizer = m.encoderTokenizer
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
	fmt.Fprintf(stderr, "memory store %s (analyzer %s, vector dimension %d, embedder %q, index snapshots %s)\n", where, an.Mode(), e.Dim(), m.embedModel, e.SnapshotsAt())
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
