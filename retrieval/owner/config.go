package owner

import (
	"errors"
	"fmt"
	"time"

	"github.com/rerankd/rerankd/retrieval/keep"
)

// Config configures the owner, the keeper of a store of this process
// alone: its indexes are built at Start, and kept by every write.
type Config struct {
	// SnapshotDir, when set, is a directory where the owner saves each
	// namespace's vector index (retrieval/snap's format) at Close, after
	// the start-up build and when writes go quiet, and from which the next
	// start loads it instead of re-inserting every vector (a load is a
	// sequential read, a rebuild a beam search per vector; figures in
	// docs/perf/measurements.md). A snapshot is used only if it was saved at the
	// namespace's current store.VectorGen, so it never adds or loses a
	// vector; any other snapshot (missing, stale, damaged, another
	// dimension or index configuration) is ignored with a log line and the
	// index is rebuilt. Empty: no snapshots. The directory is created when
	// first needed.
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

// DefaultConfig returns the defaults documented on Config's fields.
func DefaultConfig() Config {
	return Config{SnapshotIdle: 2 * time.Minute, SnapshotMinVectors: 1000, Backfill: true, BackfillBatch: 32}
}

// Validate reports every invalid field at once, each a *keep.FieldError
// named as a field of retrieval.Config.Owner.
func (c Config) Validate() error {
	var errs []error
	if c.SnapshotIdle < 0 {
		errs = append(errs, keep.FieldErr("Owner.SnapshotIdle", c.SnapshotIdle, ">= 0"))
	}
	if c.SnapshotMinVectors < 0 {
		errs = append(errs, keep.FieldErr("Owner.SnapshotMinVectors", c.SnapshotMinVectors, ">= 0"))
	}
	if c.Backfill && (c.BackfillBatch < 1 || c.BackfillBatch > keep.MaxBatch) {
		errs = append(errs, keep.FieldErr("Owner.BackfillBatch", c.BackfillBatch, fmt.Sprintf("in 1..%d", keep.MaxBatch)))
	}
	return errors.Join(errs...)
}
