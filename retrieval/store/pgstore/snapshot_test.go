package pgstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

func TestSnapshots(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if seq, err := s.SnapshotSeq(ctx, "n"); err != nil || seq != 0 {
		t.Fatalf("no snapshot yet: %d %v", seq, err)
	}
	if err := s.Snapshot(ctx, "n", func(uint64, io.Reader) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reading a missing snapshot: %v", err)
	}
	big := make([]byte, 2*snapChunk+12345) // three chunks
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	put := func(seq uint64, data []byte) bool {
		t.Helper()
		ok, err := s.PutSnapshot(ctx, "n", seq, func(w io.Writer) error { _, err := w.Write(data); return err })
		if err != nil {
			t.Fatalf("put at %d: %v", seq, err)
		}
		return ok
	}
	read := func() (uint64, []byte) {
		t.Helper()
		var got []byte
		var at uint64
		if err := s.Snapshot(ctx, "n", func(seq uint64, r io.Reader) error {
			at = seq
			var err error
			got, err = io.ReadAll(r)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return at, got
	}
	if !put(5, big) {
		t.Fatal("first snapshot not written")
	}
	if seq, got := read(); seq != 5 || !bytes.Equal(got, big) {
		t.Fatalf("read back: seq %d, %d bytes (want 5, %d)", seq, len(got), len(big))
	}
	if put(5, []byte("same seq")) || put(3, []byte("older")) {
		t.Fatal("a snapshot at or before the stored one replaced it")
	}
	if !put(9, []byte("newer")) {
		t.Fatal("a newer snapshot was not written")
	}
	if seq, got := read(); seq != 9 || string(got) != "newer" {
		t.Fatalf("after replacing: %d %q", seq, got)
	}
	var chunks int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM rerankd_snapshot_chunks WHERE ns = 'n'`).Scan(&chunks))
	if chunks != 1 {
		t.Fatalf("%d chunk rows after the replacement, want 1 (the old ones deleted)", chunks)
	}
	// A failed encoding writes nothing.
	boom := errors.New("boom")
	if _, err := s.PutSnapshot(ctx, "n", 12, func(w io.Writer) error { _, _ = w.Write(big); return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed encoding: %v", err)
	}
	if seq, got := read(); seq != 9 || string(got) != "newer" {
		t.Fatalf("after a failed save: %d %q", seq, got)
	}
	// The reader's own error comes back as it is.
	if err := s.Snapshot(ctx, "n", func(uint64, io.Reader) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("reader error: %v", err)
	}
	if _, err := s.PutSnapshot(ctx, "../x", 1, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad namespace: %v", err)
	}
	if _, err := s.PutSnapshot(ctx, "n", 0, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("sequence 0: %v", err)
	}
	must(t, s.DeleteSnapshot(ctx, "n"))
	if seq, err := s.SnapshotSeq(ctx, "n"); err != nil || seq != 0 {
		t.Fatalf("after delete: %d %v", seq, err)
	}
}

// TestMigrateFrom1: a database at schema version 1 (before snapshots and
// purging) keeps its memories and gains the snapshot tables and the purge
// horizon when a newer build opens it; its tombstones get a time, so a
// purge can remove them.
func TestMigrateFrom1(t *testing.T) {
	url := newDB(t)
	s := open(t, url, Options{})
	must(t, s.Put(mem("ns", "a", "kept"), nil))
	c := sqlConn(t, url)
	exec(t, c, `DROP TABLE rerankd_snapshot_chunks, rerankd_snapshots`)
	exec(t, c, `DROP INDEX rerankd_memories_tombstones`)
	exec(t, c, `ALTER TABLE rerankd_namespaces DROP COLUMN purged`)
	must(t, s.Delete("ns", "a"))
	must(t, s.Put(mem("ns", "a", "kept"), nil))
	must(t, s.Put(mem("ns", "gone", "x"), nil))
	must(t, s.Delete("ns", "gone"))
	exec(t, c, `UPDATE rerankd_memories SET time = NULL WHERE deleted`) // version 1 kept no time on tombstones
	exec(t, c, `UPDATE rerankd_meta SET value = '1' WHERE key = 'schema_version'`)
	s2 := open(t, url, Options{})
	if m, err := s2.Get("ns", "a"); err != nil || m.Text != "kept" {
		t.Fatalf("memory after the migration: %+v %v", m, err)
	}
	if ok, err := s2.PutSnapshot(context.Background(), "ns", 1, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil || !ok {
		t.Fatalf("snapshot after the migration: %v %v", ok, err)
	}
	if n, err := s2.PurgeTombstones(context.Background(), time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("purging the tombstone written before the migration: %d %v", n, err)
	}
}
