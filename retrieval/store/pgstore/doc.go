// Package pgstore is the memory store several rerankd processes share: a
// PostgreSQL database holding the memories, each namespace's change
// sequence and its vector-index snapshots. *Store meets store.Backend with
// the embedded bbolt store's behaviour (checked by
// retrieval/store/storetest) and store.Feed, through which each process's
// in-memory indexes follow the writes of all of them.
//
// # Schema
//
// Open migrates the database to SchemaVersion (versioned migrations, in
// one transaction under pg_advisory_xact_lock, so processes starting
// together neither race nor apply one twice; a database at a newer
// version than this build knows is refused with store.ErrIncompatible):
//
//	rerankd_meta (key text PRIMARY KEY, value text NOT NULL)
//	    'schema_version' → the version
//	rerankd_namespaces (ns text COLLATE "C" PRIMARY KEY,
//	    seq bigint        the change sequence: the number of the namespace's
//	                      last committed write transaction; never decreases,
//	                      never reset, also not when the namespace empties
//	    live bigint       its memories (Count; Namespaces lists live > 0)
//	    vecgen_seq bigint, vecgen_stamp bigint
//	                      store.VectorGen, the uint64 bits in bigints;
//	                      zero when the namespace has no memories
//	    purged bigint     tombstones up to this sequence may be purged
//	                      (purge.go; schema version 3))
//	rerankd_memories (ns text COLLATE "C", id text COLLATE "C",
//	    seq bigint        the sequence of the transaction that last wrote the row
//	    deleted boolean   a tombstone: followers learn of deletes from it
//	    memory bytea      JSON of memory.Memory (store.MarshalMemory); NULL
//	                      when deleted. Not jsonb: text cannot hold NUL,
//	                      which a memory's text may
//	    time timestamptz  the memory's time (microseconds), for operators;
//	                      a tombstone's is when it was deleted
//	    vector bytea      float32 little-endian; NULL when none
//	    PRIMARY KEY (ns, id))
//	rerankd_memories_changes ON rerankd_memories (ns, seq, id)
//	rerankd_memories_tombstones ON rerankd_memories (time) WHERE deleted
//	rerankd_snapshots (ns PRIMARY KEY, seq, bytes, chunks, saved)
//	rerankd_snapshot_chunks (ns, seq, n, data bytea)
//	                      a namespace's serialised vector index, taken at a
//	                      change sequence, in 8 MiB chunks (snapshot.go);
//	                      schema version 2
//
// COLLATE "C" makes ORDER BY id byte order, as in the bbolt store. Reads
// ignore tombstones; Changes returns them.
//
// Opening a database already at SchemaVersion needs no CREATE privilege:
// a role with SELECT, INSERT, UPDATE and DELETE on the tables suffices.
// After a PutBatch commits, the store may run ANALYZE rerankd_memories
// (analyze.go: whenever its writes since its last analysis reach the
// table's size then, from 1000 rows), so that a bulk load does not run
// under the generic plans of a table without statistics; a role that may
// not analyse the table only gets that logged.
//
// # Writes and the change sequence
//
// Every write (Put, PutBatch, Delete, PutVectorsIf) is one transaction.
// For each namespace it changes, in sorted namespace order (so that
// concurrent batches cannot deadlock), it first takes the namespace's row
// lock by incrementing its seq (INSERT ... ON CONFLICT DO NOTHING, then
// UPDATE ... SET seq = seq + 1 RETURNING seq), and every row it writes in
// that namespace gets that seq (a batch's rows share one and are told
// apart by ID). It then maintains live and the vector generation (under
// the lock it reads which IDs are live), and calls pg_notify on channel
// rerankd_changes with the namespace's name, delivered at commit.
// BumpVectorGen changes no memory and takes no sequence number. A write
// that fails or changes nothing rolls back, and its sequence number is
// not used: committed sequence numbers of a namespace are 1, 2, 3, ...
//
// Why a follower that has applied every change up to Seq(ns) has seen
// every acknowledged write: the row lock is held from the increment until
// COMMIT and released only after the commit is visible, so the
// transaction numbered k+1 cannot take its number before k has committed
// and become visible. Sequence numbers are therefore handed out, and
// become visible, in commit order. A write acknowledged before a reader
// calls Seq(ns) has committed with some k ≤ Seq(ns); each row's seq only
// grows, so a reader that then reads Changes from its cursor until they
// run out finds each row at its latest seq (≥ the cursor it had) and
// misses none: rows committed later carry larger numbers, and a row
// rewritten while the reader pages moves past the cursor and is read
// again later, in its newer state.
//
// # Durability
//
// A write is acknowledged (returns nil) only after its COMMIT succeeded,
// i.e. as durable as the server's settings make a commit (fsync and
// synchronous_commit on by default; with synchronous replication, on the
// standbys too). When the connection drops or the deadline passes during
// COMMIT, the outcome is unknown: the error wraps store.ErrUnavailable and
// the write is never acknowledged (it may or may not have been applied;
// retrying a Put is safe, a Delete may then find ErrNotFound).
//
// # Connecting
//
// Open parses the URL (malformed → an error wrapping store.ErrInvalid),
// creates the pool and tries once to connect and migrate. If the server
// cannot be reached, Open still returns the Store: every call then fails
// with an error wrapping store.ErrUnavailable that says why ("postgres
// 127.0.0.1:5432: connection refused"), until a later call connects and
// migrates. While the server is unreachable, at most one call at a time
// tries (the others wait for its outcome), and a failed try is reported to
// every call for the next 500 ms without trying again. A call that finds
// a connection broken (a restart) makes the next call try first. Ping
// reports whether the database is reachable and migrated.
//
// Every method runs under Options.OpTimeout (the Backend methods have no
// context). List, ForEach and CheckProgress read a page of rows per query
// and call their callback between queries: they never hold the whole
// namespace in memory nor one query open for the whole walk, and they do
// not see one snapshot.
//
// # Errors
//
// Invalid input fails with store.ErrInvalid before any SQL; a closed
// Store with store.ErrClosed; a missing memory with store.ErrNotFound; a
// row that does not decode with store.ErrCorrupt naming it. Connection
// refused or reset, timeouts (pgconn's, and OpTimeout), SQLSTATE class 08,
// 57P01/57P02/57P03 (shutdown, crash, starting up), 53300 (too many
// connections), and a COMMIT with unknown outcome wrap
// store.ErrUnavailable: retry later. Anything else is wrapped with
// context. No error, log line, String or Redacted shows the password.
//
// # Environment
//
// The driver (pgx) reads the libpq environment when parsing the URL: a
// password missing from it comes from PGPASSWORD or the passfile
// (PGPASSFILE, default ~/.pgpass), and PGHOST, PGPORT, PGUSER, PGDATABASE,
// PGSSLMODE and the other PG* variables fill in what the URL leaves out.
// That is the only environment read outside cmd/, and it is the driver's.
package pgstore
