package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Deletes leave tombstones (rerankd_memories rows with deleted set, their
// time the deletion's), so that followers learn of them from Changes. A
// tombstone only matters to a follower that has not yet applied it, so
// after a while it can go: PurgeTombstones removes those deleted before a
// time and raises the namespace's purged horizon to the highest sequence
// removed. Changes from a cursor below the horizon is store.ErrStale, and
// that follower rebuilds the namespace: it may have missed a delete.

// PurgeTombstones removes the tombstones of deletes made before `before`,
// one namespace per transaction (taking the namespace's row lock first,
// as writers do, so neither waits on the other for long nor deadlocks),
// and returns how many it removed.
func (s *Store) PurgeTombstones(ctx context.Context, before time.Time) (int64, error) {
	var names []string
	err := s.call(ctx, "find tombstones", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT DISTINCT ns FROM rerankd_memories WHERE deleted AND time < $1`, before)
		if err != nil {
			return err
		}
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return 0, err
	}
	var total int64
	for _, ns := range names {
		err := s.call(ctx, "purge tombstones of "+ns, func(ctx context.Context) error {
			return s.write(ctx, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SELECT 1 FROM rerankd_namespaces WHERE ns = $1 FOR UPDATE`, ns); err != nil {
					return err
				}
				var n, top int64
				if err := tx.QueryRow(ctx, `WITH gone AS (DELETE FROM rerankd_memories WHERE ns = $1 AND deleted AND time < $2 RETURNING seq)
					SELECT count(*), coalesce(max(seq), 0) FROM gone`, ns, before).Scan(&n, &top); err != nil {
					return err
				}
				if n == 0 {
					return errNoCommit
				}
				if _, err := tx.Exec(ctx, `UPDATE rerankd_namespaces SET purged = greatest(purged, $2) WHERE ns = $1`, ns, top); err != nil {
					return err
				}
				total += n
				return nil
			})
		})
		if err != nil {
			return total, fmt.Errorf("%w (%d tombstones purged before it)", err, total)
		}
	}
	return total, nil
}
