// Package follow is the follower, the keeper of the indexes of a store
// shared with other processes (one that implements store.Shared, such as
// PostgreSQL). Such a store is written by other processes too, so this
// process's indexes are caches of it:
//
//   - a namespace's indexes are built from the store on its first use, in
//     the background, and dropped when Config.Follow.IndexMemory is exceeded
//     (least recently used first), to be rebuilt on a later use;
//   - they follow the store's change sequence: woken by the store's
//     notifications, and by polling every Config.Follow.Poll for those missed;
//   - a search first asks the store for the namespace's committed
//     sequence and catches up to it, so it reflects every write
//     acknowledged by any process before it began; when that takes longer
//     than Config.Follow.CatchUp it fails with retrieval.ErrUnavailable instead of
//     answering from stale indexes. A first build that outlasts
//     Config.Follow.CatchUp is not waited for: the search scans the store (the
//     scan level, as during the start-up build of an unshared store).
//
// Writes go to the store only: the indexes learn of them from the change
// sequence like any other process's writes, so there is one way for an
// index to change and a write never waits for an index build.
//
// A search completes its candidates from the records the follower keeps
// beside the indexes (records.go), not from the database: the follower
// receives every record anyway. Index check (Service.Check) is refused: a
// comparison with a store that others write proves nothing.
//
// The shared store may keep each namespace's vector index (snapshot.go,
// in retrieval/snap's format), taken at a change sequence; a loader
// applies every change after it, so the loaded index ends exact,
// whichever replica saved it and whenever. Tombstones older than
// Config.Follow.TombstoneRetention are purged hourly; a follower further
// behind than that (store.ErrStale) rebuilds the namespace.
//
// Invariants: a namespace's indexes change only under its lock (Mu), in
// the store's change order; through never exceeds what is applied; a
// namespace whose index refused a record the store accepted (Dirty) is
// dropped and rebuilt on its next use, never answered from.
package follow
