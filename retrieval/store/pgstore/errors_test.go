package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rerankd/rerankd/retrieval/store"
)

func TestUnavailableClassification(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true},  // admin shutdown
		{&pgconn.PgError{Code: "57P02"}, true},  // crash shutdown
		{&pgconn.PgError{Code: "57P03"}, true},  // cannot connect now
		{&pgconn.PgError{Code: "53300"}, true},  // too many connections
		{&pgconn.PgError{Code: "08006"}, true},  // connection failure
		{&pgconn.PgError{Code: "08P01"}, true},  // protocol violation
		{&pgconn.PgError{Code: "28P01"}, false}, // wrong password: configuration
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "40001"}, false},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("x: %w", net.ErrClosed), true},
		{context.DeadlineExceeded, true},
		{&net.OpError{Op: "dial", Err: errors.New("no route")}, true},
		{errors.New("unable to encode"), false},
		{store.ErrNotFound, false},
	} {
		if got := isUnavailable(c.err); got != c.want {
			t.Errorf("isUnavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestCommitErr(t *testing.T) {
	s := &Store{addr: "db:5432", opts: Options{}.withDefaults()}
	for _, c := range []struct {
		err         error
		unavailable bool
	}{
		{&pgconn.PgError{Code: "40001", Message: "could not serialize"}, false}, // rolled back: a definite failure
		{pgx.ErrTxCommitRollback, false},
		{&pgconn.PgError{Code: "57P01", Message: "terminating"}, true},
		{io.ErrUnexpectedEOF, true},
		{context.DeadlineExceeded, true},
	} {
		err := s.commitErr(c.err)
		if errors.Is(err, store.ErrUnavailable) != c.unavailable {
			t.Errorf("commitErr(%v) = %v, unavailable %v", c.err, err, !c.unavailable)
		}
		if c.unavailable && !strings.Contains(err.Error(), "outcome is unknown") {
			t.Errorf("commitErr(%v) = %q: does not say the outcome is unknown", c.err, err)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("commitErr(%v) does not wrap it", c.err)
		}
	}
}

func TestCursorID(t *testing.T) {
	for after, want := range map[string]string{
		"":        "",
		"abc":     "abc",
		"ab\x00c": "ab",
		"ab\xffc": "ab\x7f",
		"é":       "\x7f",
	} {
		if got := cursorID(after); got != want {
			t.Errorf("cursorID(%q) = %q, want %q", after, got, want)
		}
	}
}

func TestPasswordsIn(t *testing.T) {
	for conn, want := range map[string]string{
		"postgres://u:pw1@h/db":           "pw1",
		"postgres://u:p%40w@h:x/db":       "p@w",
		"host=h password=pw2 port=x":      "pw2",
		"host=h password='p w3' port=x":   "p w3",
		"postgres://u:pw4@[::1/db":        "pw4",
		"postgresql://u:pw5@h:1:2:3/db?x": "pw5",
	} {
		found := false
		for _, pw := range passwordsIn(conn) {
			found = found || pw == want
		}
		if !found {
			t.Errorf("passwordsIn(%q) = %q, missing %q", conn, passwordsIn(conn), want)
		}
	}
}
