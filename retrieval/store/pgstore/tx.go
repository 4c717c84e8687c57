package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// errNoCommit, returned by a write's body, rolls the transaction back
// without an error: the write turned out to change nothing.
var errNoCommit = errors.New("nothing to commit")

// write runs fn in a transaction and commits it. An error from fn rolls
// back; an error from COMMIT whose outcome is unknown wraps
// store.ErrUnavailable (see commitErr).
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer s.rollback(tx)
	if err := fn(tx); err != nil {
		if errors.Is(err, errNoCommit) {
			return nil
		}
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return s.commitErr(err)
	}
	return nil
}

// rollback ends tx if it is still open (after Commit it does nothing). It
// has its own short deadline: the call's may have passed.
func (s *Store) rollback(tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), min(s.opts.OpTimeout, rollbackTimeout))
	defer cancel()
	_ = tx.Rollback(ctx)
}

// rollbackTimeout bounds a ROLLBACK.
const rollbackTimeout = 5 * time.Second
