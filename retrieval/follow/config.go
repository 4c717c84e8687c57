package follow

import (
	"errors"
	"time"

	"github.com/rerankd/rerankd/retrieval/keep"
)

// Config configures the follower, the keeper of a store shared with
// other processes (one that implements store.Shared, such as PostgreSQL).
// There the indexes are caches of the database: a namespace's are built
// on its first use and then follow the store's change sequence (see the
// package doc).
type Config struct {
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
	// store (snapshot.go), saved after a build and when its changes go
	// quiet for SnapshotIdle, with at least SnapshotMinVectors vectors, so
	// that a replica builds a namespace by loading it rather than
	// inserting every vector. Default true.
	SharedSnapshots bool
	// SnapshotIdle: a namespace is snapshotted again once its changes
	// have been quiet this long. 0: only after a build. Default 2 minutes.
	SnapshotIdle time.Duration
	// SnapshotMinVectors: namespaces with fewer vectors are not
	// snapshotted. Default 1000.
	SnapshotMinVectors int
	// Poll is how often the follower asks the store for every namespace's
	// sequence, to catch up namespaces whose change notifications were
	// missed. Default 1 s.
	Poll time.Duration
}

// DefaultConfig returns the defaults documented on Config's fields.
func DefaultConfig() Config {
	return Config{
		CatchUp:            5 * time.Second,
		TombstoneRetention: 24 * time.Hour,
		SharedSnapshots:    true,
		SnapshotIdle:       2 * time.Minute,
		SnapshotMinVectors: 1000,
		Poll:               time.Second,
	}
}

// Validate reports every invalid field at once, each a *keep.FieldError
// named as a field of retrieval.Config.Follow.
func (c Config) Validate() error {
	var errs []error
	if c.IndexMemory < 0 {
		errs = append(errs, keep.FieldErr("Follow.IndexMemory", c.IndexMemory, ">= 0 (0: no bound)"))
	}
	if c.CatchUp <= 0 {
		errs = append(errs, keep.FieldErr("Follow.CatchUp", c.CatchUp, "> 0"))
	}
	if c.TombstoneRetention < 0 {
		errs = append(errs, keep.FieldErr("Follow.TombstoneRetention", c.TombstoneRetention, ">= 0 (0: kept forever)"))
	}
	if c.SnapshotIdle < 0 {
		errs = append(errs, keep.FieldErr("Follow.SnapshotIdle", c.SnapshotIdle, ">= 0"))
	}
	if c.SnapshotMinVectors < 0 {
		errs = append(errs, keep.FieldErr("Follow.SnapshotMinVectors", c.SnapshotMinVectors, ">= 0"))
	}
	if c.Poll <= 0 {
		errs = append(errs, keep.FieldErr("Follow.Poll", c.Poll, "> 0"))
	}
	return errors.Join(errs...)
}
