package pgstore

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestMisconfigured: a database the server refuses (a wrong password, a
// missing database, a bad startup setting) makes the store unavailable,
// with the server's reason and never the password; it is not a storage
// failure. A database holding a table of rerankd's names that rerankd did
// not make is refused at open as a schema conflict.
func TestMisconfigured(t *testing.T) {
	srv := pgtest.Shared(t)
	good := newDB(t)
	with := func(mod func(u *url.URL)) string {
		u, err := url.Parse(good)
		if err != nil {
			t.Fatal(err)
		}
		mod(u)
		return u.String()
	}
	const wrongPass = "not-the-password-123"
	for _, c := range []struct {
		name, url, reason string
	}{
		{"wrong password", with(func(u *url.URL) { u.User = url.UserPassword(srv.User(), wrongPass) }), "28P01"},
		{"missing database", with(func(u *url.URL) { u.Path = "/no_such_database" }), "3D000"},
		{"bad options", with(func(u *url.URL) { u.RawQuery += "&options=-c%20no_such.setting%20x" }), "SQLSTATE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, c.url, Options{})
			err := s.Put(mem("ns", "a", "text"), nil)
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Put: %v, want an error wrapping ErrUnavailable", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.reason) || !strings.Contains(msg, "refuses") {
				t.Errorf("Put: %q does not give the server's reason (%s)", msg, c.reason)
			}
			for _, pw := range []string{wrongPass, srv.Password()} {
				if strings.Contains(msg, pw) {
					t.Errorf("Put: %q shows a password", msg)
				}
			}
		})
	}
	t.Run("schema conflict", func(t *testing.T) {
		db := newDB(t)
		exec(t, sqlConn(t, db), `CREATE TABLE rerankd_memories (owner text, payload jsonb)`)
		_, err := Open(db, Options{})
		if !errors.Is(err, store.ErrIncompatible) || !strings.Contains(err.Error(), "schema conflict") {
			t.Fatalf("Open: %v, want a schema conflict wrapping ErrIncompatible", err)
		}
	})
}
