package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rerankd/rerankd/retrieval/store"
)

// unavailableError is a failure to reach the server (or to learn a
// commit's outcome). Its text says why without the driver's wording;
// errors.Is finds store.ErrUnavailable and errors.As the driver's error.
type unavailableError struct {
	addr   string // host:port of the server
	reason string
	cause  error
	// refused: the server answered and refused (credentials, database,
	// settings), as opposed to not answering: the operator must act.
	refused bool
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("%v: postgres %s: %s", store.ErrUnavailable, e.addr, e.reason)
}

func (e *unavailableError) Unwrap() []error { return []error{store.ErrUnavailable, e.cause} }

// isUnavailable reports whether err is a connection-level failure: the
// server is down, restarting, refusing connections or unreachable, a
// connection was lost, or the operation ran out of time.
func isUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, store.ErrUnavailable) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return unavailableCode(pe.Code)
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce),
		errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		pgconn.SafeToRetry(err):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// unavailableCode reports the SQLSTATEs that mean "not now": class 08
// (connection exception), admin_shutdown, crash_shutdown,
// cannot_connect_now and too_many_connections.
func unavailableCode(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300":
		return true
	}
	return strings.HasPrefix(code, "08")
}

// reason is a short human account of a connection-level failure.
func (s *Store) reason(err error) string {
	var pe *pgconn.PgError
	var errno syscall.Errno
	var dns *net.DNSError
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	case errors.As(err, &ce) && (errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)):
		return fmt.Sprintf("no connection within %v", s.opts.ConnectTimeout)
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return fmt.Sprintf("no answer within %v", s.opts.OpTimeout)
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &dns):
		return dns.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, pgconn.ErrConnClosed):
		return "connection closed"
	}
	return s.scrub(err.Error())
}

// mapErr turns a driver error into this package's: nil stays nil, the
// errors of package store (and the caller's own) pass unchanged,
// connection-level failures wrap store.ErrUnavailable, anything else is
// returned as is (the caller adds context with %w). parent is the
// caller's context: its end is the caller's doing, not an outage.
func (s *Store) mapErr(parent context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load():
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	case parent.Err() != nil && errors.Is(err, parent.Err()):
		return parent.Err()
	case parent.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)):
		return fmt.Errorf("%w: %w", parent.Err(), err)
	}
	var ue *unavailableError
	if errors.As(err, &ue) {
		return err
	}
	if isUnavailable(err) {
		return &unavailableError{addr: s.addr, reason: s.reason(err), cause: err}
	}
	return err
}

// unusable maps an error from connecting and migrating (probe). Every
// such failure means the store cannot be used now, so besides the outages
// mapErr knows, a server's refusal (a wrong password, a missing database,
// a bad options= setting, a role without privileges) wraps
// store.ErrUnavailable too: callers answer "retry later" and the operator
// reads the reason in the log, rather than callers reading a storage
// failure. A schema conflict (store.ErrIncompatible) keeps its own kind.
func (s *Store) unusable(err error) error {
	err = s.mapErr(context.Background(), err)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrIncompatible), errors.Is(err, store.ErrClosed):
		return err
	case errors.As(err, &pe):
		return &unavailableError{addr: s.addr, reason: fmt.Sprintf("the server refuses: %s (SQLSTATE %s)", pe.Message, pe.Code), cause: err, refused: true}
	}
	return &unavailableError{addr: s.addr, reason: s.scrub(err.Error()), cause: err, refused: true}
}

// commitErr maps an error from COMMIT. A server's error reply means the
// transaction rolled back (a definite failure) unless it is one of the
// "not now" codes; anything else (the connection dropped, the deadline
// passed) leaves the outcome unknown: ErrUnavailable, never acknowledged.
func (s *Store) commitErr(err error) error {
	var pe *pgconn.PgError
	if (errors.As(err, &pe) && !unavailableCode(pe.Code)) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return fmt.Errorf("commit: %w", err)
	}
	return &unavailableError{addr: s.addr, reason: "the commit's outcome is unknown: " + s.reason(err), cause: err}
}

// redactedError hides the password in the text of an error it wraps
// (defence in depth: the driver's messages do not contain it).
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string { return redact(e.err.Error(), e.secret) }
func (e *redactedError) Unwrap() error { return e.err }

// hide wraps err so that its text never shows the password.
func (s *Store) hide(err error) error {
	if err == nil || s.password == "" {
		return err
	}
	return &redactedError{err: err, secret: s.password}
}

func (s *Store) scrub(msg string) string { return redact(msg, s.password) }

// redact replaces secret in msg.
func redact(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "xxxxx")
}

var (
	urlPassword = regexp.MustCompile(`://[^/@:]*:([^@/]*)@`)
	kvPassword  = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s]*)`)
)

// passwordsIn returns what may be passwords in a connection string that
// could not be parsed, for redaction.
func passwordsIn(conn string) []string {
	var out []string
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw)
		}
	}
	for _, m := range urlPassword.FindAllStringSubmatch(conn, -1) {
		if m[1] != "" {
			out = append(out, m[1])
			if dec, err := url.PathUnescape(m[1]); err == nil && dec != m[1] {
				out = append(out, dec)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		if v := strings.Trim(m[1], "'"); v != "" {
			out = append(out, v, m[1])
		}
	}
	return out
}
