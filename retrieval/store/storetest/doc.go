// Package storetest is the conformance suite of the store contract: every
// behaviour that retrieval/store/backend.go (store.Backend) and
// retrieval/store/shared.go (store.Shared) promise, run against any
// backend, so that the embedded bbolt store and the PostgreSQL store
// (retrieval/store/pgstore) are held to exactly the same tests, and a
// shared backend to the same tests of the feed the follower relies on.
//
// # What the suite proves
//
// Run runs each behaviour as a subtest of the caller's test, on a new,
// empty backend per subtest (Opener.Open):
//
//   - round trip: what Put and PutBatch store is what Get, Vector, GetMany,
//     Page, List, Count, Namespaces and ForEach (with and without
//     WithProgress) read back, every Memory field exactly (Time to the
//     nanosecond with its UTC offset, Text with NUL bytes, emoji, unusual but
//     valid UTF-8 and no Unicode normalisation, Source, Metadata with empty
//     values and keys differing only in case), vectors bit for bit (-0,
//     subnormals, ±MaxFloat32), with neither side aliasing the other's
//     slices;
//   - writes: a replacing Put leaves nothing of the old memory behind, a nil
//     vector removes the old one, PutBatch is all or nothing (any invalid
//     item writes nothing, existing records untouched) and a later duplicate
//     wins, Delete removes the memory and its vector (ErrNotFound when
//     absent) and a namespace's last Delete removes the namespace and its
//     vector generation;
//   - namespaces never see each other's memories, vectors or generations;
//   - order: IDs and namespaces in byte order (uppercase before lowercase,
//     punctuation and digits where their bytes put them), so a database
//     collation other than byte order fails; Page's cursor, its limit bounds
//     (1..store.MaxPage) and GetMany's order of the asked IDs;
//   - vector generations: every transaction that changes a namespace's
//     vectors (Put, PutBatch, PutVectorsIf, Delete) moves it by one with a
//     non-zero stamp, other writes and other namespaces do not, a re-created
//     namespace's first vector draws a new stamp, BumpVectorGen;
//   - PutVectorsIf's compare-and-set: keep sees the stored record, missing
//     IDs are skipped, the written IDs come back sorted, the generation moves
//     only when something was written, an invalid vector writes nothing;
//   - errors, checked with errors.Is: ErrNotFound, ErrInvalid (invalid
//     namespaces, IDs and memories for every method, a vector of the wrong
//     dimension, NaN or ±Inf, an empty vector, page limits), ErrClosed for
//     every method after Close; a callback's error stops List and ForEach
//     and comes back;
//   - CheckProgress on a healthy store: no problems, the right counts,
//     progress ending at done == total;
//   - concurrency: goroutines writing different namespaces and the same
//     namespace (also the same IDs) while others read lose nothing, each
//     memory keeps the vector written with it, and the generation counts
//     every vector write;
//   - persistence, when the opener can reopen: everything above, and the
//     vector generations, survive closing and opening the same data.
//
// RunShared runs the store.Shared behaviours, on a new, empty backend per
// subtest (SharedOpener.Open) and, when the opener can, a second handle on
// the same data for the other process's side (SharedOpener.Attach):
//
//   - sequences: Seq is 0 for a namespace never written, every transaction
//     that changes a namespace's memories takes its next number (one per
//     namespace a batch touches), a refused or failed write takes none;
//     Seqs of the asked namespaces (absent: never written) or of all;
//   - changes: each changed memory once, in its latest state, in (Seq, ID)
//     order, with its vector only when asked, a delete as a tombstone with
//     only its keys; paging by each page's last Cursor reads every change
//     once at any limit, and limits outside 1..store.MaxPage are ErrInvalid;
//   - Listen: fn hears each namespace a commit of the other handle changed,
//     and Listen returns ctx's error when ctx ends;
//   - snapshots: one per namespace, replaced only by a later sequence, read
//     back byte for byte with its sequence, ErrNotFound when there is none,
//     the callbacks' errors returned as they are (a failed write keeps the
//     old snapshot), DeleteSnapshot;
//   - purge: tombstones older than the time go, a cursor that has not seen
//     them is then ErrStale, one past them reads on, live memories stay, a
//     purged ID can be written again;
//   - Ping answers on an open backend; after Close every shared method,
//     Ping and a running Listen included, is ErrClosed and calls no
//     callback.
//
// Backends' own tests use the suite's fixtures (Mem, Vec, EqualMem,
// EqualVec), so that they build and compare memories the same way.
//
// What the suite cannot prove is left to each backend's own tests: crash
// durability, damaged data (ErrCorrupt and what CheckProgress reports
// about it), ErrUnavailable, file locking, server restarts, options.
//
// # Adding a backend
//
// In the backend's package, write one test that calls Run with an Opener:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Opener{
//			Open: func(t *testing.T, dim int) store.Backend {
//				b, err := mybackend.Open(newEmptyPlace(t), mybackend.Options{Dimension: dim})
//				if err != nil {
//					t.Fatal(err)
//				}
//				t.Cleanup(func() { _ = b.Close(); removePlace() })
//				return b
//			},
//			Reopen: func(t *testing.T, b store.Backend) store.Backend {
//				// close b, open the same place again (no new cleanup of
//				// the place: the first Open's still runs)
//			},
//		})
//	}
//
// Open must return a new, empty backend each call (the subtests assume
// nothing else is in it) that accepts only vectors of dimension dim, or any
// dimension in 1..store.MaxDimension when dim is 0. The suite closes some
// backends itself (the ErrClosed and persistence tests), so the cleanup's
// Close runs on a closed backend: it must not panic, and its error is
// ignored. The suite calls Open from subtests one after another, never in
// parallel, with each subtest's own t.
//
// When the suite fails on a backend, fix the backend (or, if the contract
// itself is wrong, change backend.go and this suite together): never skip
// a subtest for one backend. A behaviour one backend adds beyond the
// contract belongs to that backend's own tests.
//
// The suite imports no backend: backends import it, from their tests.
package storetest
