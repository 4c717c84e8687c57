package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// isStoreURL reports whether --store names a PostgreSQL database rather
// than a bbolt file.
func isStoreURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// openStore opens the memory store --store names and returns it with how
// to name it in logs (a URL without its password). A PostgreSQL store
// that cannot be reached yet is not an error: it connects on first use,
// and /ready says why it is not ready until then.
func openStore(where string, dim int, log *slog.Logger) (store.Backend, string, error) {
	if isStoreURL(where) {
		opts := pgstore.DefaultOptions()
		opts.Dimension, opts.Logger = dim, log
		st, err := pgstore.Open(where, opts)
		if err != nil {
			return nil, "", fmt.Errorf("%w: --store: %w", errUsage, err)
		}
		return st, st.Redacted(), nil
	}
	if err := os.MkdirAll(filepath.Dir(where), 0o700); err != nil {
		return nil, "", fmt.Errorf("memory store: %w", err)
	}
	st, err := store.Open(where, store.Options{Dimension: dim})
	if err != nil {
		// The store's error says why (locked by another process, damaged,
		// not a file); only the way out is added here.
		return nil, "", fmt.Errorf("memory store: %w (use --store to pick another file, or --store none)", err)
	}
	return st, where, nil
}

// byteUnits are the suffixes parseBytes accepts, longest first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// parseBytes reads a byte count: digits, optionally followed by a unit
// (KiB, MiB, GiB, TiB, KB, MB, GB, TB, B). "" is 0.
func parseBytes(s string) (int64, error) {
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

// openStoreReadOnly opens a store to read it (check, the source of a
// copy): a bbolt file with a shared lock, or a PostgreSQL database, which
// must be reachable now.
func openStoreReadOnly(where string) (store.Backend, string, error) {
	if !isStoreURL(where) {
		st, err := store.Open(where, store.Options{ReadOnly: true})
		if err != nil {
			return nil, "", err
		}
		return st, where, nil
	}
	st, name, err := openStore(where, 0, nil)
	if err != nil {
		return nil, "", err
	}
	if err := pingNow(st); err != nil {
		_ = st.Close()
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return st, name, nil
}

// pingNow checks that a PostgreSQL store answers (and has its schema).
func pingNow(st store.Backend) error {
	p, ok := st.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Ping(ctx)
}
