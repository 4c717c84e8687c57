// Package keep is the seam between the memory service's facade
// (retrieval.Service) and its two keepers of the namespaces' indexes,
// retrieval/owner (a store of this process alone) and retrieval/follow (a
// store shared with other processes): the Keeper and Slot interfaces, and
// what both sides share, so that neither imports the other.
//
// Base holds the store, the embedder, the common configuration (given to
// NewBase, read through accessors, unexported) and the lifecycle: the
// background goroutines (started by Go, stopped through Stopping and
// Context), the start-up build's end (Built, Ready, Wait) and Shutdown,
// which marks the base closed under a keeper's lock so that no background
// work starts after it. Space is the part of a namespace's state both keepers
// keep (its lock, its indexes swapped whole, readiness, the dirty mark),
// Spaces their map of namespaces. The error kinds, Stats, FollowStats and
// CheckReport are the facade's, re-exported by retrieval.
//
// Invariants: a Space's indexes change only under its Mu; a keeper returns
// a nil Slot, never a Slot holding nil, for a namespace never written;
// Shutdown returns only after every background goroutine started by Go has
// ended.
package keep
