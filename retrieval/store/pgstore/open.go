package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rerankd/rerankd/retrieval/store"
)

// retryInterval is how long a failed attempt to reach the server is
// reported again to every call without trying anew: during an outage at
// most one attempt runs at a time, and at most one per interval.
const retryInterval = 500 * time.Millisecond

// Store is a memory store in a PostgreSQL database, shared by any number
// of processes. It meets store.Backend and store.Feed. It is safe for
// concurrent use.
type Store struct {
	pool     *pgxpool.Pool
	cfg      *pgxpool.Config // as parsed, for Listen's own connections
	opts     Options
	redacted string // the URL without the password
	addr     string // host:port of the first server, for errors
	password string // for redaction only

	closed    atomic.Bool
	closeCtx  context.Context // done when Close is called
	closeFunc context.CancelFunc
	closeOnce sync.Once

	// ok is true while the schema is known to be migrated and the last
	// operation reached the server. While false, calls go through gate:
	// one of them at a time probes (connects, and migrates the first
	// time); the others wait for its outcome.
	ok       atomic.Bool
	migrated atomic.Bool
	gate     chan struct{} // holds one token: the right to probe
	lastTry  time.Time     // when the last probe failed (guarded by gate)
	lastErr  error         // its error (guarded by gate)

	analyze analyzer // when to analyse the memories table after writes (analyze.go)
}

var (
	_ store.Backend = (*Store)(nil)
	_ store.Feed    = (*Store)(nil)
)

// Open returns a Store for the database at url, a PostgreSQL URL
// (postgres://user:password@host:port/dbname?sslmode=...) or keyword/value
// string, as pgx parses it: a password missing from it is taken from
// PGPASSWORD or the passfile (PGPASSFILE, ~/.pgpass), and other PG*
// environment variables fill in what the URL leaves out. That is the only
// environment this package reads, and it is the driver's doing.
//
// Open tries once to connect and migrate the schema (for at most
// ConnectTimeout + OpTimeout). It fails only when url or opts is
// malformed (an error wrapping store.ErrInvalid), or when it reaches the
// database and finds a schema newer than this build knows (an error
// wrapping store.ErrIncompatible). If the server cannot be reached, Open
// still returns the Store: every call fails with an error wrapping
// store.ErrUnavailable until one connects and migrates the schema.
func Open(url string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, parseErr(url, err)
	}
	cfg.MaxConns = opts.maxConns32()
	cfg.MinConns = 0
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout // per host attempted
	s := &Store{
		cfg:      cfg.Copy(),
		opts:     opts,
		redacted: redactedURL(cfg.ConnConfig.Config),
		addr:     net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))),
		password: cfg.ConnConfig.Password,
		gate:     make(chan struct{}, 1),
	}
	s.closeCtx, s.closeFunc = context.WithCancel(context.Background())
	s.pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, s.hide(fmt.Errorf("pgstore: open %s: %w", s.redacted, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.ConnectTimeout+opts.OpTimeout)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		err = fmt.Errorf("pgstore: open %s: %w", s.redacted, err)
		if errors.Is(err, store.ErrIncompatible) {
			s.pool.Close()
			return nil, err
		}
		what := "database not reachable at open; calls fail until it is"
		if ue := (*unavailableError)(nil); errors.As(err, &ue) && ue.refused {
			what = "the database refuses this store at open; calls fail until that is fixed"
		}
		opts.Logger.Warn("pgstore: "+what, "db", s.redacted, "err", err.Error())
	}
	return s, nil
}

// parseErr reports a malformed connection string without its password.
func parseErr(url string, err error) error {
	msg := err.Error() // pgx masks what it recognises as a password
	for _, pw := range passwordsIn(url) {
		msg = redact(msg, pw)
	}
	// The driver's error is not wrapped: its fields hold the raw string.
	return fmt.Errorf("pgstore: %w: database URL: %s", store.ErrInvalid, msg)
}

// redactedURL writes the connection settings as a URL without the password.
func redactedURL(c pgconn.Config) string {
	hosts := []string{net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))}
	for _, fb := range c.Fallbacks {
		if fb.Host == c.Host && fb.Port == c.Port {
			continue // the same server without TLS, or with another TLS mode
		}
		hosts = append(hosts, net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))))
	}
	if strings.HasPrefix(c.Host, "/") { // a Unix socket folder
		return fmt.Sprintf("postgres://%s@/%s?host=%s", c.User, c.Database, c.Host)
	}
	return fmt.Sprintf("postgres://%s@%s/%s", c.User, strings.Join(hosts, ","), c.Database)
}

// Redacted returns the database URL without its password, for logs.
func (s *Store) Redacted() string { return s.redacted }

// String is Redacted, so that printing a Store never shows the password.
func (s *Store) String() string { return "pgstore " + s.redacted }

// Close releases the pool and ends every Listen. Calls made afterwards
// fail with store.ErrClosed; so does a second Close.
func (s *Store) Close() error {
	first := false
	s.closeOnce.Do(func() {
		first = true
		s.closed.Store(true)
		s.closeFunc()
		s.pool.Close()
	})
	if !first {
		return fmt.Errorf("pgstore: close: %w", store.ErrClosed)
	}
	return nil
}

// Ping returns nil when the database is reachable and its schema migrated
// (connecting and migrating if that has not happened yet), else why not.
func (s *Store) Ping(ctx context.Context) error {
	return s.call(ctx, "ping", func(ctx context.Context) error { return s.pool.Ping(ctx) })
}

// call runs fn under a call context once the Store is ready, and names
// and maps its error (see mapErr). what is the operation, for errors.
func (s *Store) call(parent context.Context, what string, fn func(ctx context.Context) error) error {
	ctx, cancel := s.opCtx(parent)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return s.hide(fmt.Errorf("pgstore: %s: %w", what, err))
	}
	if err := fn(ctx); err != nil {
		if ctx.Err() != nil && parent.Err() == nil && !isStoreErr(err) {
			// Out of time, whatever the driver made of it (a broken
			// connection, a cancelled statement).
			err = &unavailableError{addr: s.addr, reason: fmt.Sprintf("no answer within %v", s.opts.OpTimeout), cause: err}
		}
		return s.hide(fmt.Errorf("pgstore: %s: %w", what, s.failed(parent, err)))
	}
	return nil
}

// isStoreErr reports the errors a call's body returns on purpose.
func isStoreErr(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrCorrupt)
}

// opCtx is a call's context: parent bounded by OpTimeout.
func (s *Store) opCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, s.opts.OpTimeout)
}

// ready returns nil when a call may proceed: the Store is open, and the
// server reachable and migrated as far as is known. Otherwise one caller
// at a time probes (connects, migrates the first time); callers queued
// behind a failed probe, and those arriving within retryInterval of it,
// get its error.
func (s *Store) ready(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if s.ok.Load() {
		return nil
	}
	select {
	case s.gate <- struct{}{}:
	case <-ctx.Done():
		return s.hide(fmt.Errorf("connect: %w", s.mapErr(context.Background(), ctx.Err())))
	}
	defer func() { <-s.gate }()
	if s.closed.Load() {
		return store.ErrClosed
	}
	if s.ok.Load() {
		return nil
	}
	if s.lastErr != nil && time.Since(s.lastTry) < retryInterval {
		return s.lastErr
	}
	err := s.probe(ctx)
	if err != nil {
		err = s.hide(fmt.Errorf("connect: %w", s.unusable(err)))
		if s.lastErr == nil || s.lastErr.Error() != err.Error() {
			s.opts.Logger.Warn("pgstore: database unavailable", "db", s.redacted, "err", err.Error())
		}
		s.lastTry, s.lastErr = time.Now(), err
		return err
	}
	if s.lastErr != nil {
		s.opts.Logger.Info("pgstore: database reachable again", "db", s.redacted)
	}
	s.lastErr = nil
	s.ok.Store(true)
	return nil
}

// probe connects (and migrates the first time). Idle connections that
// died with a server restart are found and dropped on the way: the probe
// succeeds when one connection answers.
func (s *Store) probe(ctx context.Context) error {
	if !s.migrated.Load() {
		if err := s.migrate(ctx); err != nil {
			return err
		}
		s.migrated.Store(true)
		return nil
	}
	for range s.opts.MaxConns + 1 {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		err = c.Ping(ctx)
		c.Release()
		if err == nil || !isUnavailable(err) || ctx.Err() != nil {
			return err
		}
	}
	return errors.New("no pooled connection answers")
}

// failed maps err (see mapErr) and, when it says the server is
// unreachable, makes the next call probe before it proceeds.
func (s *Store) failed(parent context.Context, err error) error {
	err = s.mapErr(parent, err)
	if errors.Is(err, store.ErrUnavailable) {
		s.ok.Store(false)
	}
	return err
}

var _ store.Shared = (*Store)(nil)
