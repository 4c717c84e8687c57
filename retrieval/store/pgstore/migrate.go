package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rerankd/rerankd/retrieval/store"
)

// migrationLock is the pg_advisory_xact_lock key that serialises the
// migrations of every process on one database ("rerankd" in ASCII).
const migrationLock int64 = 0x72_65_72_61_6e_6b_64

// migrations[i] brings the schema from version i to i+1. A released
// migration is never edited: changes are new migrations.
var migrations = [][]string{
	{ // 1: the first schema (see the package documentation)
		`CREATE TABLE rerankd_namespaces (
			ns text COLLATE "C" PRIMARY KEY,
			seq bigint NOT NULL DEFAULT 0,
			live bigint NOT NULL DEFAULT 0,
			vecgen_seq bigint NOT NULL DEFAULT 0,
			vecgen_stamp bigint NOT NULL DEFAULT 0)`,
		`CREATE TABLE rerankd_memories (
			ns text COLLATE "C" NOT NULL,
			id text COLLATE "C" NOT NULL,
			seq bigint NOT NULL,
			deleted boolean NOT NULL DEFAULT false,
			memory bytea,
			time timestamptz,
			vector bytea,
			PRIMARY KEY (ns, id))`,
		`CREATE INDEX rerankd_memories_changes ON rerankd_memories (ns, seq, id)`,
	},
	{ // 2: vector index snapshots (snapshot.go)
		`CREATE TABLE rerankd_snapshots (
			ns text COLLATE "C" PRIMARY KEY,
			seq bigint NOT NULL,
			bytes bigint NOT NULL,
			chunks integer NOT NULL,
			saved timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE rerankd_snapshot_chunks (
			ns text COLLATE "C" NOT NULL,
			seq bigint NOT NULL,
			n integer NOT NULL,
			data bytea NOT NULL,
			PRIMARY KEY (ns, seq, n))`,
	},
	{ // 3: tombstone purging (purge.go): a tombstone's time is when it was deleted
		`ALTER TABLE rerankd_namespaces ADD COLUMN purged bigint NOT NULL DEFAULT 0`,
		`UPDATE rerankd_memories SET time = now() WHERE deleted`,
		`CREATE INDEX rerankd_memories_tombstones ON rerankd_memories (time) WHERE deleted`,
	},
}

// SchemaVersion is the database schema version this build writes and
// reads: the number of migrations.
var SchemaVersion = len(migrations)

// migrate brings the database to SchemaVersion in one transaction,
// serialised with every other process's by an advisory lock, so that
// processes starting together neither race nor apply a migration twice.
// A database at a newer version is refused with store.ErrIncompatible.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer s.rollback(tx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	// CREATE TABLE IF NOT EXISTS needs CREATE on the schema even when the
	// table exists: look first, so a role that may only read and write a
	// migrated database can open it.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('rerankd_meta') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("look for rerankd_meta: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS rerankd_meta (key text PRIMARY KEY, value text NOT NULL)`); err != nil {
			return fmt.Errorf("create rerankd_meta: %w", err)
		}
	}
	var raw string
	err = tx.QueryRow(ctx, `SELECT value FROM rerankd_meta WHERE key = 'schema_version'`).Scan(&raw)
	version := 0
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case isSchemaConflict(err):
		return conflict("rerankd_meta", err)
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	default:
		if version, err = strconv.Atoi(raw); err != nil || version < 0 {
			return fmt.Errorf("%w: rerankd_meta schema_version is %q, not a version number", store.ErrIncompatible, raw)
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: the database has schema version %d, this build knows up to %d (upgrade rerankd)",
			store.ErrIncompatible, version, SchemaVersion)
	}
	if version == SchemaVersion {
		return tx.Commit(ctx)
	}
	for v := version; v < SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				if isSchemaConflict(err) {
					return conflict(fmt.Sprintf("migration %d", v+1), err)
				}
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO rerankd_meta (key, value) VALUES ('schema_version', $1)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, strconv.Itoa(SchemaVersion)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return s.commitErr(err)
	}
	s.opts.Logger.Info("pgstore: schema migrated", "db", s.redacted, "from", version, "to", SchemaVersion)
	return nil
}

// isSchemaConflict reports the errors of a database that holds tables of
// rerankd's names that rerankd did not make (or that were altered): a
// table already there (42P07), a column or index missing or of another
// type (42703, 42704, 42804), a relation of that name that is a view or
// other non-table (42809).
func isSchemaConflict(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42P07", "42703", "42704", "42804", "42809":
		return true
	}
	return false
}

// conflict names a schema conflict: retrying cannot help, and the way out
// is another database or schema.
func conflict(where string, err error) error {
	var pe *pgconn.PgError
	errors.As(err, &pe)
	return fmt.Errorf("%w: schema conflict at %s: %s (SQLSTATE %s): the database holds tables named like rerankd's that rerankd did not create or that were altered; use another database, or another schema through search_path",
		store.ErrIncompatible, where, pe.Message, pe.Code)
}
