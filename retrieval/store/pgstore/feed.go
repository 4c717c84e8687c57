package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Seq returns ns's committed change sequence (0 for a namespace never
// written).
func (s *Store) Seq(ctx context.Context, ns string) (uint64, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	var seq int64
	err := s.call(ctx, "sequence of "+ns, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT seq FROM rerankd_namespaces WHERE ns = $1`, ns).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			seq, err = 0, nil
		}
		return err
	})
	return uint64(seq), err //nolint:gosec // sequences are never negative
}

// Seqs returns the committed sequence of each of names that was ever
// written (also those that hold no memory now; absent: never written),
// or of every namespace when names is nil; one query either way.
func (s *Store) Seqs(ctx context.Context, names []string) (map[string]uint64, error) {
	for _, ns := range names {
		if err := memory.ValidateNamespace(ns); err != nil {
			return nil, fmt.Errorf("pgstore: %w", err)
		}
	}
	out := map[string]uint64{}
	err := s.call(ctx, "sequences", func(ctx context.Context) error {
		clear(out)
		q, args := `SELECT ns, seq FROM rerankd_namespaces`, []any(nil)
		if names != nil {
			q, args = q+` WHERE ns = ANY($1)`, []any{names}
		}
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		var ns string
		var seq int64
		_, err = pgx.ForEachRow(rows, []any{&ns, &seq}, func() error {
			out[ns] = uint64(seq) //nolint:gosec // never negative
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Changes returns up to limit (1..store.MaxPage) changes of ns after the
// cursor in (Seq, ID) order: each memory changed since, once, in its
// latest state, deletes as tombstones (Deleted, only Namespace and ID
// set). Vectors are read only when withVectors.
func (s *Store) Changes(ctx context.Context, ns string, after store.Cursor, limit int, withVectors bool) ([]store.Change, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if limit < 1 || limit > store.MaxPage {
		return nil, fmt.Errorf("pgstore: %w: changes limit %d not in 1..%d", store.ErrInvalid, limit, store.MaxPage)
	}
	var out []store.Change
	var purged int64
	err := s.call(ctx, "changes of "+ns, func(ctx context.Context) error {
		out, purged = out[:0], 0
		// One statement, so one snapshot: the purge horizon and the rows
		// agree (a purge committing in between cannot hide a tombstone).
		rows, err := s.pool.Query(ctx, `SELECT n.purged, m.id, m.seq, m.deleted, m.memory, m.vector
			FROM rerankd_namespaces n LEFT JOIN LATERAL (
				SELECT id, seq, deleted, memory, CASE WHEN $5 THEN vector END AS vector
				FROM rerankd_memories WHERE ns = n.ns AND (seq, id) > ($2, $3) ORDER BY seq, id LIMIT $4) m ON true
			WHERE n.ns = $1 ORDER BY m.seq, m.id`,
			ns, seqParam(after.Seq), cursorID(after.ID), limit, withVectors)
		if err != nil {
			return err
		}
		var id *string
		var seq *int64
		var deleted *bool
		var mem, vec []byte
		_, err = pgx.ForEachRow(rows, []any{&purged, &id, &seq, &deleted, &mem, &vec}, func() error {
			if id == nil {
				return nil // the namespace has no change after the cursor
			}
			c := store.Change{Seq: uint64(*seq), Deleted: *deleted} //nolint:gosec // never negative
			if c.Deleted {
				c.Record.Memory = memory.Memory{Namespace: ns, ID: *id}
			} else {
				r, err := record(ns, *id, mem, vec)
				if err != nil {
					return err
				}
				c.Record = r
			}
			out = append(out, c)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	// Tombstones up to purged may be gone: a follower that has not applied
	// everything up to there may have missed one.
	if purged > 0 && uint64(purged) >= after.Seq { //nolint:gosec // never negative
		return nil, fmt.Errorf("pgstore: changes of %s after %d: %w (deletes up to %d purged)", ns, after.Seq, store.ErrStale, purged)
	}
	return out, nil
}

// Listen calls fn with the name of a namespace soon after each commit
// that changed it, by any process, until ctx is done (it returns
// ctx.Err()), the Store is closed (store.ErrClosed) or the connection is
// lost (an error wrapping store.ErrUnavailable; the caller listens
// again). It holds a connection of its own, outside the pool. fn runs on
// Listen's goroutine: a slow fn delays the next notifications (the server
// queues them). Notifications sent while no Listen runs are lost: callers
// also poll Seqs.
func (s *Store) Listen(ctx context.Context, fn func(ns string)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closeCtx, cancel)
	defer stop()
	parent := ctx
	var conn *pgx.Conn
	err := s.call(ctx, "listen", func(ctx context.Context) error {
		cc := s.cfg.ConnConfig.Copy()
		c, err := pgx.ConnectConfig(ctx, cc)
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
			_ = c.Close(context.Background())
			return err
		}
		conn = c
		return nil
	})
	if err != nil {
		return s.listenEnd(parent, err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), rollbackTimeout)
		defer ccancel()
		_ = conn.Close(cctx)
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return s.listenEnd(parent, s.hide(fmt.Errorf("pgstore: listen: %w", s.failed(parent, err))))
		}
		fn(n.Payload)
	}
}

// listenEnd is Listen's error: ErrClosed once the Store is closed, the
// context's error once it is done, else err.
func (s *Store) listenEnd(ctx context.Context, err error) error {
	switch {
	case s.closed.Load():
		return fmt.Errorf("pgstore: listen: %w", store.ErrClosed)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}
