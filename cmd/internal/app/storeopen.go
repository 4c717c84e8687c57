package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// OpenStore opens the memory store that flag (--store, --to) names and
// returns it with how to name it in logs (a URL without its password). A
// PostgreSQL store that cannot be reached yet is not an error: it connects
// on first use, and /ready says why it is not ready until then. "none" is
// refused: the callers that accept it handle it before opening.
func OpenStore(flag, where string, dim int, log *slog.Logger) (store.Backend, string, error) {
	loc, err := ParseStoreLocation(flag, where)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	switch loc.Kind {
	case StoreNone:
		return nil, "", fmt.Errorf("%w: %s none names no store here; %s", cli.ErrUsage, flag, StoreForms)
	case StorePostgres:
		opts := pgstore.DefaultOptions()
		opts.Dimension, opts.Logger = dim, log
		st, err := pgstore.Open(loc.Conn, opts)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s: %w", cli.ErrUsage, flag, err)
		}
		return st, st.Redacted(), nil
	}
	if err := os.MkdirAll(filepath.Dir(where), 0o700); err != nil {
		return nil, "", fmt.Errorf("memory store: %w", err)
	}
	st, err := bolt.Open(where, bolt.Options{Dimension: dim})
	if err != nil {
		// The store's error says why (locked by another process, damaged,
		// not a file); only the way out is added here.
		return nil, "", fmt.Errorf("memory store: %w (use %s to pick another file%s)", err, flag, noneHint(flag))
	}
	return st, where, nil
}

// noneHint offers "none" where the flag takes it.
func noneHint(flag string) string {
	if flag == "--store" {
		return ", or --store none"
	}
	return ""
}

// byteUnits are the suffixes ParseBytes accepts, longest first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseBytes reads a byte count: digits, optionally followed by a unit
// (KiB, MiB, GiB, TiB, KB, MB, GB, TB, B). "" is 0.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	num, mult := s, int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a byte count (e.g. 2GiB, 512MiB, 1000000)", s)
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// OpenStoreReadOnly opens a store to read it (check, the source of a
// copy): a bbolt file with a shared lock, or a PostgreSQL database, which
// must be reachable now.
func OpenStoreReadOnly(flag, where string) (store.Backend, string, error) {
	loc, err := ParseStoreLocation(flag, where)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	if loc.Kind == StoreFile {
		st, err := bolt.Open(where, bolt.Options{ReadOnly: true})
		if err != nil {
			return nil, "", err
		}
		return st, where, nil
	}
	st, name, err := OpenStore(flag, where, 0, nil)
	if err != nil {
		return nil, "", err
	}
	if err := PingNow(st); err != nil {
		_ = st.Close()
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return st, name, nil
}

// PingNow checks that a PostgreSQL store answers (and has its schema).
func PingNow(st store.Backend) error {
	p, ok := st.(store.Pinger)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Ping(ctx)
}
