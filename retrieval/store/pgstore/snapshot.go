package pgstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Vector index snapshots: a namespace's serialised vector index, saved by
// one replica so that another (or the same, after an eviction) can load it
// instead of inserting every vector again. A snapshot is taken at a change
// sequence: it holds every change up to it (and possibly some after), so
// a loader applies the changes after it and has the exact state. The bytes
// are opaque here; they are stored in chunks of snapChunk bytes (a bytea
// holds at most 1 GB, and a row that size would be held in memory whole).
//
//	rerankd_snapshots        ns → seq, bytes, chunks, saved
//	rerankd_snapshot_chunks  (ns, seq, n) → data
//
// A new snapshot is written beside the old one and replaces it in one
// transaction; a reader reads the header and the chunks in one
// repeatable-read transaction, so it sees one whole snapshot or none.

// snapChunk is the size of one stored chunk.
const snapChunk = 8 << 20

// SnapshotTimeout bounds one snapshot's upload or download: far longer
// than OpTimeout, since a large namespace's index is hundreds of MB.
const SnapshotTimeout = 10 * time.Minute

// SnapshotSeq returns the change sequence of ns's stored snapshot, or 0
// when it has none.
func (s *Store) SnapshotSeq(ctx context.Context, ns string) (uint64, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	var seq int64
	err := s.call(ctx, "snapshot of "+ns, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT seq FROM rerankd_snapshots WHERE ns = $1`, ns).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			seq, err = 0, nil
		}
		return err
	})
	return uint64(seq), err //nolint:gosec // sequences are never negative
}

// PutSnapshot stores ns's snapshot taken at change sequence seq, written
// by write, replacing the stored one. It writes nothing and returns false
// when the stored snapshot is at seq or later (another replica got there
// first).
func (s *Store) PutSnapshot(ctx context.Context, ns string, seq uint64, write func(io.Writer) error) (bool, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return false, fmt.Errorf("pgstore: %w", err)
	}
	if seq == 0 || seq > 1<<62 {
		return false, fmt.Errorf("pgstore: %w: snapshot sequence %d", store.ErrInvalid, seq)
	}
	written := false
	err := s.longCall(ctx, "save snapshot of "+ns, func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error {
			var cur int64
			err := tx.QueryRow(ctx, `SELECT seq FROM rerankd_snapshots WHERE ns = $1 FOR UPDATE`, ns).Scan(&cur)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			case uint64(cur) >= seq: //nolint:gosec // never negative
				return errNoCommit
			}
			cw := &chunkWriter{ctx: ctx, tx: tx, ns: ns, seq: int64(seq)} //nolint:gosec // bounded above
			bw := bufio.NewWriterSize(cw, snapChunk)
			if err := write(bw); err != nil {
				return fmt.Errorf("encoding: %w", err)
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM rerankd_snapshot_chunks WHERE ns = $1 AND seq <> $2`, ns, int64(seq)); err != nil { //nolint:gosec // bounded above
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO rerankd_snapshots (ns, seq, bytes, chunks, saved) VALUES ($1, $2, $3, $4, now())
				ON CONFLICT (ns) DO UPDATE SET seq = EXCLUDED.seq, bytes = EXCLUDED.bytes, chunks = EXCLUDED.chunks, saved = EXCLUDED.saved`,
				ns, int64(seq), cw.bytes, cw.n); err != nil { //nolint:gosec // bounded above
				return err
			}
			written = true
			return nil
		})
	})
	return written, err
}

// chunkWriter stores what is written to it as chunk rows of one snapshot;
// each Write is one chunk (bufio in front makes them snapChunk bytes).
type chunkWriter struct {
	ctx   context.Context
	tx    pgx.Tx
	ns    string
	seq   int64
	n     int
	bytes int64
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO rerankd_snapshot_chunks (ns, seq, n, data) VALUES ($1, $2, $3, $4)`, w.ns, w.seq, w.n, p); err != nil {
		return 0, err
	}
	w.n++
	w.bytes += int64(len(p))
	return len(p), nil
}

// Snapshot calls read with ns's stored snapshot: its change sequence and
// a reader of its bytes, which fetches one chunk at a time. It returns an
// error wrapping store.ErrNotFound when ns has none; read's error is
// returned as it is.
func (s *Store) Snapshot(ctx context.Context, ns string, read func(seq uint64, r io.Reader) error) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	var readErr error
	err := s.longCall(ctx, "load snapshot of "+ns, func(ctx context.Context) error {
		tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer s.rollback(tx)
		var seq, size int64
		var chunks int
		err = tx.QueryRow(ctx, `SELECT seq, bytes, chunks FROM rerankd_snapshots WHERE ns = $1`, ns).Scan(&seq, &size, &chunks)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("snapshot of %s: %w", ns, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		cr := &chunkReader{ctx: ctx, tx: tx, ns: ns, seq: seq, chunks: chunks}
		readErr = read(uint64(seq), cr) //nolint:gosec // never negative
		if cr.err != nil {
			return cr.err // the database failed under read: report that
		}
		if readErr == nil && (cr.n != chunks || cr.bytes != size) {
			readErr = fmt.Errorf("pgstore: snapshot of %s: read %d of %d chunks, %d of %d bytes", ns, cr.n, chunks, cr.bytes, size)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return readErr
}

// chunkReader reads a snapshot's chunks in order, one query each.
type chunkReader struct {
	ctx       context.Context
	tx        pgx.Tx
	ns        string
	seq       int64
	chunks, n int
	bytes     int64
	buf       []byte
	err       error // the database's, kept apart from decoding errors
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.n == r.chunks {
			return 0, io.EOF
		}
		if err := r.tx.QueryRow(r.ctx, `SELECT data FROM rerankd_snapshot_chunks WHERE ns = $1 AND seq = $2 AND n = $3`,
			r.ns, r.seq, r.n).Scan(&r.buf); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return 0, fmt.Errorf("snapshot chunk %d of %d missing", r.n, r.chunks)
			}
			r.err = err
			return 0, err
		}
		r.n++
		r.bytes += int64(len(r.buf))
	}
	k := copy(p, r.buf)
	r.buf = r.buf[k:]
	return k, nil
}

// DeleteSnapshot removes ns's snapshot (when its vectors are gone, or it
// cannot be loaded).
func (s *Store) DeleteSnapshot(ctx context.Context, ns string) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return s.call(ctx, "delete snapshot of "+ns, func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `DELETE FROM rerankd_snapshot_chunks WHERE ns = $1`, ns); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM rerankd_snapshots WHERE ns = $1`, ns)
			return err
		})
	})
}

// longCall is call with SnapshotTimeout in place of OpTimeout.
func (s *Store) longCall(parent context.Context, what string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(parent, SnapshotTimeout)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return s.hide(fmt.Errorf("pgstore: %s: %w", what, err))
	}
	if err := fn(ctx); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return s.hide(fmt.Errorf("pgstore: %w", err))
		}
		return s.hide(fmt.Errorf("pgstore: %s: %w", what, s.failed(parent, err)))
	}
	return nil
}
