package retrieval

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// DefaultSpeakerKey is Config.SpeakerKey's default.
const DefaultSpeakerKey = "speaker"

// Config configures an Engine. Start from DefaultConfig.
type Config struct {
	// BM25 configures every namespace's lexical index. Its Analyzer (nil:
	// lexical's default, CJK unigram+bigram) analyses memories and
	// queries at every level, the scan included; choose another
	// lexical.CJKMode for Chinese or Japanese memories. Its K1 and B (1.2
	// and 0.75 by default, validated by lexical.CheckK1 and CheckB) are
	// the index's own, for bm25.Index.Search: the engine's searches rank
	// with each query's Ranking.
	BM25 bm25.Config
	// SpeakerKey is the metadata key whose value is a memory's speaker
	// (who said or wrote it) for field-aware matching (Ranking.Fields):
	// "speaker" by default; empty: no memory has a speaker field. It is
	// read when a memory is indexed.
	SpeakerKey string
	// Fusion combines BM25 and vector hits at the hybrid level (weighted sum
	// 0.7 vector / 0.3 BM25 by default, or RRF).
	Fusion post.FusionConfig
	// Dim is the vector dimension for client-supplied vectors when there is
	// no Embedder; 0 means the engine has no vector index unless an Embedder
	// gives one. With an Embedder it must be 0 or equal the Embedder's Dim.
	Dim int
	// HNSW holds the vector indexes' graph and search parameters
	// (hnsw.DefaultConfig's by default); its Dim is ignored, every index
	// takes the engine's dimension. A snapshot built with other graph
	// parameters is refused; other search parameters are applied to it.
	HNSW hnsw.Config
	// Depth is how many hits each retriever contributes before fusion when
	// the query does not say. Default 100.
	Depth int
	// ScanLimit bounds how many memories a scan-level search reads from the
	// store (the newest are not preferred: IDs are read in byte order).
	// Default 20000.
	ScanLimit int
	// PageSize is how many records the start-up build reads per store read
	// transaction; smaller pages block writers for less time. Default 1000.
	PageSize int
	// Progress, when set, is called during the start-up build with the
	// number of memories indexed so far and the total, per phase ("bm25",
	// then "vector"), and then during the back-fill ("backfill", memories
	// looked at so far). It must be fast and must not call the Engine.
	Progress func(phase string, done, total int)
	// Logger receives what the engine decides on its own: snapshots loaded,
	// refused (and why) or saved, back-fill progress and embedder errors.
	// nil discards.
	Logger *slog.Logger

	// Owner configures the keeper of a store of this process alone (a
	// bbolt file); Follow the keeper of a store shared with other
	// processes (PostgreSQL). Only the one New picks is used.
	Owner  OwnerConfig
	Follow FollowConfig
}

// OwnerConfig configures the owner, the keeper of a store of this process
// alone: its indexes are built at Start, and kept by every write.
type OwnerConfig struct {
	// SnapshotDir, when set, is a directory where the engine saves each
	// namespace's vector index (format in snapfile.go) at Close, after the
	// start-up build and when writes go quiet, and from which the next
	// start loads it instead of re-inserting every vector: for 100k
	// 1024-d vectors a load takes about a second, a rebuild minutes. A
	// snapshot is used only if it was saved at the namespace's current
	// store.VectorGen, so it never adds or loses a vector; any other
	// snapshot (missing, stale, damaged, another dimension or index
	// configuration) is ignored with a log line and the index is rebuilt.
	// Empty: no snapshots. The directory is created when first needed.
	SnapshotDir string
	// SnapshotIdle: a namespace whose vectors changed is snapshotted again
	// once it has had no write for this long, so that a crash (which skips
	// the save at Close) after a quiet period still finds a fresh
	// snapshot. A snapshot is stale after any write, so saving during a
	// stream of writes would not help. 0: only after the build and at
	// Close. Default 2 minutes.
	SnapshotIdle time.Duration
	// SnapshotMinVectors: namespaces with fewer vectors are not
	// snapshotted (rebuilding them is about as fast as loading, and many
	// small tenants would otherwise mean many small files). Default 1000.
	SnapshotMinVectors int

	// Backfill, with an Embedder, embeds after the start-up build the
	// stored memories that have no usable vector (stored before the
	// embedder was configured, zero, or of another dimension), in the
	// background, so they become reachable by vector search. A memory
	// rewritten meanwhile keeps its newer vector. Default true.
	Backfill bool
	// BackfillBatch is how many texts the back-fill embeds per Embedder
	// call, between which Close can stop it. Default 32.
	BackfillBatch int
}

// FollowConfig configures the follower, the keeper of a store shared with
// other processes (one that implements store.Shared, such as PostgreSQL).
// There the indexes are caches of the database: a namespace's are built
// on its first use and then follow the store's change sequence (see
// follow.go).
type FollowConfig struct {
	// IndexMemory bounds the estimated bytes of all namespaces' indexes;
	// past it the least recently used namespaces are dropped and rebuilt
	// on their next use. 0: no bound. Default 0.
	IndexMemory int64
	// CatchUp bounds how long a search waits for its namespace's indexes
	// to reach every write committed before the search began (a first
	// build included); past it the search fails with ErrUnavailable
	// rather than answer from stale indexes. Default 5 s.
	CatchUp time.Duration
	// TombstoneRetention is how long a shared store keeps the record of
	// a delete, through which other processes learn of it; older ones
	// are purged (hourly, by any process), and a process whose indexes
	// are further behind than that rebuilds the namespace. 0: kept
	// forever. Default 24 h.
	TombstoneRetention time.Duration
	// SharedSnapshots keeps each namespace's vector index in the shared
	// store (follow_snapshot.go), saved after a build and when its
	// changes go quiet for SnapshotIdle, with at least SnapshotMinVectors
	// vectors, so that a replica builds a namespace by loading it rather
	// than inserting every vector. Default true.
	SharedSnapshots bool
	// SnapshotIdle: a namespace is snapshotted again once its changes
	// have been quiet this long. 0: only after a build. Default 2 minutes.
	SnapshotIdle time.Duration
	// SnapshotMinVectors: namespaces with fewer vectors are not
	// snapshotted. Default 1000.
	SnapshotMinVectors int
	// Poll is how often the engine asks the store for every namespace's
	// sequence, to catch up namespaces whose change notifications were
	// missed. Default 1 s.
	Poll time.Duration
}

// DefaultConfig returns the defaults documented on Config's fields.
func DefaultConfig() Config {
	return Config{
		BM25:      bm25.DefaultConfig(),
		HNSW:      hnsw.DefaultConfig(0),
		Fusion:    post.DefaultFusionConfig(),
		Depth:     100,
		ScanLimit: 20000,
		PageSize:  1000,

		SpeakerKey: DefaultSpeakerKey,

		Owner: OwnerConfig{
			SnapshotIdle:       2 * time.Minute,
			SnapshotMinVectors: 1000,
			Backfill:           true,
			BackfillBatch:      32,
		},
		Follow: FollowConfig{
			CatchUp:            5 * time.Second,
			TombstoneRetention: 24 * time.Hour,
			SharedSnapshots:    true,
			SnapshotIdle:       2 * time.Minute,
			SnapshotMinVectors: 1000,
			Poll:               time.Second,
		},
	}
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if err := c.BM25.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Fusion.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.vectorIndex(1).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("retrieval: HNSW: %w", err))
	}
	if len(c.SpeakerKey) > memory.MaxMetadataKeyLen {
		errs = append(errs, fmt.Errorf("retrieval: SpeakerKey is %d bytes, more than a metadata key may have (%d)", len(c.SpeakerKey), memory.MaxMetadataKeyLen))
	}
	if c.Dim < 0 {
		errs = append(errs, fieldErr("Dim", c.Dim, ">= 0"))
	}
	if c.Depth < 1 {
		errs = append(errs, fieldErr("Depth", c.Depth, ">= 1"))
	}
	if c.ScanLimit < 1 {
		errs = append(errs, fieldErr("ScanLimit", c.ScanLimit, ">= 1"))
	}
	if c.PageSize < 1 || c.PageSize > store.MaxPage {
		errs = append(errs, fieldErr("PageSize", c.PageSize, fmt.Sprintf("in 1..%d", store.MaxPage)))
	}
	if err := c.Owner.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Follow.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Validate reports every invalid field at once.
func (c OwnerConfig) Validate() error {
	var errs []error
	if c.SnapshotIdle < 0 {
		errs = append(errs, fieldErr("Owner.SnapshotIdle", c.SnapshotIdle, ">= 0"))
	}
	if c.SnapshotMinVectors < 0 {
		errs = append(errs, fieldErr("Owner.SnapshotMinVectors", c.SnapshotMinVectors, ">= 0"))
	}
	if c.Backfill && (c.BackfillBatch < 1 || c.BackfillBatch > MaxBatch) {
		errs = append(errs, fieldErr("Owner.BackfillBatch", c.BackfillBatch, fmt.Sprintf("in 1..%d", MaxBatch)))
	}
	return errors.Join(errs...)
}

// Validate reports every invalid field at once.
func (c FollowConfig) Validate() error {
	var errs []error
	if c.IndexMemory < 0 {
		errs = append(errs, fieldErr("Follow.IndexMemory", c.IndexMemory, ">= 0 (0: no bound)"))
	}
	if c.CatchUp <= 0 {
		errs = append(errs, fieldErr("Follow.CatchUp", c.CatchUp, "> 0"))
	}
	if c.TombstoneRetention < 0 {
		errs = append(errs, fieldErr("Follow.TombstoneRetention", c.TombstoneRetention, ">= 0 (0: kept forever)"))
	}
	if c.SnapshotIdle < 0 {
		errs = append(errs, fieldErr("Follow.SnapshotIdle", c.SnapshotIdle, ">= 0"))
	}
	if c.SnapshotMinVectors < 0 {
		errs = append(errs, fieldErr("Follow.SnapshotMinVectors", c.SnapshotMinVectors, ">= 0"))
	}
	if c.Poll <= 0 {
		errs = append(errs, fieldErr("Follow.Poll", c.Poll, "> 0"))
	}
	return errors.Join(errs...)
}

// FieldError is one invalid Config field, as Validate reports it; Field
// is its path ("Dim", "Owner.BackfillBatch"), so that a caller can name
// the setting it came from (a flag).
type FieldError struct {
	Field string
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("retrieval: %s %v must be %s", e.Field, e.Value, e.Want)
}

// Problems returns each problem Validate joined into err, in order; the
// ones about a field are *FieldError.
func Problems(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func fieldErr(field string, v any, want string) error {
	return &FieldError{Field: field, Value: v, Want: want}
}

// vectorIndex is the configuration of every vector index of an engine of
// dimension dim.
func (c Config) vectorIndex(dim int) hnsw.Config {
	h := c.HNSW
	h.Dim = dim
	return h
}
