package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval/store"
)

// eventually retries fn until it succeeds or 30 s pass.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := fn()
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("%s: %v, want success or ErrUnavailable while the server comes back", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after 30 s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func wantUnavailable(t *testing.T, what string, err error, says ...string) {
	t.Helper()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("%s: %v, want ErrUnavailable", what, err)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("%s: %q does not say %q", what, err, s)
		}
	}
}

// TestLazyConnect: Open against a stopped server returns a Store whose
// calls fail with ErrUnavailable saying why; once the server is up the
// same Store connects, migrates and works.
func TestLazyConnect(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDB(t)
	must(t, srv.Stop())
	var logs testenv.SyncBuffer
	s := open(t, url, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	addr := fmt.Sprintf("postgres 127.0.0.1:%d: connection refused", srv.Port())
	wantUnavailable(t, "Put", s.Put(mem("ns", "a", "x"), nil), addr)
	_, err := s.Get("ns", "a")
	wantUnavailable(t, "Get", err, addr)
	_, err = s.Seq(context.Background(), "ns")
	wantUnavailable(t, "Seq", err, addr)
	wantUnavailable(t, "Ping", s.Ping(context.Background()), addr)
	err = s.Listen(context.Background(), func(string) {})
	wantUnavailable(t, "Listen", err, addr)
	if err := s.Put(mem("../bad", "a", "x"), nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("invalid Put while unavailable: %v, want ErrInvalid", err)
	}
	must(t, srv.StartAgain())
	eventually(t, "Put after the server started", func() error { return s.Put(mem("ns", "a", "x"), nil) })
	got, err := s.Get("ns", "a")
	must(t, err)
	if got.Text != "x" {
		t.Fatalf("Get = %+v", got)
	}
	must(t, s.Ping(context.Background()))
	if !strings.Contains(logs.String(), "reachable again") {
		t.Errorf("no recovery in the log:\n%s", logs.String())
	}
}

// TestServerRestart: a server stopped mid-use makes calls fail with
// ErrUnavailable; when it is back, the same Store recovers. A crash
// (Kill) loses no acknowledged write.
func TestServerRestart(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDB(t)
	s := open(t, url, Options{})
	must(t, s.Put(mem("ns", "before", "x"), vec(1, 3)))

	must(t, srv.Stop())
	wantUnavailable(t, "Put while stopped", s.Put(mem("ns", "a", "x"), nil), "postgres 127.0.0.1:")
	_, err := s.Count("ns")
	wantUnavailable(t, "Count while stopped", err)
	must(t, srv.StartAgain())
	eventually(t, "Put after restart", func() error { return s.Put(mem("ns", "after", "x"), nil) })

	// A restart between two calls: the pooled connections are dead; at
	// most a few calls fail, with ErrUnavailable, then all work.
	must(t, srv.Restart())
	eventually(t, "Get after a quick restart", func() error { _, err := s.Get("ns", "before"); return err })

	// A crash while writers run: each write either failed with
	// ErrUnavailable or is in the database after recovery.
	acked := make(chan string, 10000)
	stop := make(chan struct{})
	done := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				err := s.Put(mem("crash", id, "x"), vec(i, 3))
				switch {
				case err == nil:
					acked <- id
				case !errors.Is(err, store.ErrUnavailable):
					done <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	must(t, srv.Kill())
	time.Sleep(200 * time.Millisecond)
	must(t, srv.StartAgain())
	time.Sleep(200 * time.Millisecond)
	close(stop)
	for range 4 {
		must(t, <-done)
	}
	close(acked)
	n := 0
	for id := range acked {
		n++
		eventually(t, "Get "+id, func() error { _, err := s.Get("crash", id); return err })
	}
	if n == 0 {
		t.Fatal("no write acknowledged around the crash")
	}
	cnt, err := s.Count("crash")
	must(t, err)
	st, err := s.Check(func(p store.Problem) { t.Errorf("check: %v", p) })
	must(t, err)
	t.Logf("%d writes acknowledged around the crash, %d stored; check: %+v", n, cnt, st)
}

// TestPasswordNeverShown: no error, log line, String or Redacted shows the
// password, for a wrong password, an unreachable server and malformed
// URLs.
func TestPasswordNeverShown(t *testing.T) {
	const secret = "Sup3rS3cret-pw"
	srv := pgtest.Shared(t)
	good := srv.NewDB(t)
	var logs testenv.SyncBuffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), ConnectTimeout: 2 * time.Second}
	var texts []string
	check := func(what string, err error) {
		if err != nil {
			texts = append(texts, what+": "+err.Error())
			t.Logf("%s: %v", what, err)
		}
	}

	wrong := strings.Replace(good, ":"+srv.Password()+"@", ":"+secret+"@", 1)
	s := open(t, wrong, opts)
	texts = append(texts, s.String(), s.Redacted(), fmt.Sprint(s), fmt.Sprintf("%+v", s))
	err := s.Put(mem("ns", "a", "x"), nil)
	// A refused login makes the store unusable until the operator acts:
	// unavailable (503, retry later), with the server's reason.
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("Put with a wrong password: %v, want ErrUnavailable with the server's reason", err)
	}
	check("wrong password", err)
	check("ping", s.Ping(context.Background()))

	down := fmt.Sprintf("postgres://rerankd:%s@127.0.0.1:1/db?sslmode=disable", secret)
	s2 := open(t, down, opts)
	texts = append(texts, s2.Redacted())
	check("unreachable", s2.Put(mem("ns", "a", "x"), nil))

	for _, bad := range []string{
		"postgres://rerankd:" + secret + "@127.0.0.1:notaport/db",
		"postgres://rerankd:" + secret + "@[::1/db",
		"host=127.0.0.1 port=x password=" + secret,
		"host=127.0.0.1 password='" + secret + "' port=99999999",
		"postgres://rerankd:" + secret + "@127.0.0.1/db?sslmode=nonsense",
	} {
		_, err := Open(bad, opts)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Open(malformed): %v, want ErrInvalid", err)
		}
		check("malformed", err)
	}

	ok := open(t, good, opts)
	must(t, ok.Ping(context.Background()))
	texts = append(texts, ok.Redacted(), ok.String(), logs.String())
	for _, text := range texts {
		for _, pw := range []string{secret, srv.Password()} {
			if strings.Contains(text, pw) {
				t.Errorf("password shown: %s", text)
			}
		}
	}
	if want := fmt.Sprintf("postgres://%s@127.0.0.1:%d/", srv.User(), srv.Port()); !strings.HasPrefix(ok.Redacted(), want) {
		t.Errorf("Redacted = %q, want %s...", ok.Redacted(), want)
	}
}

func TestBadURLAndOptions(t *testing.T) {
	for _, bad := range []string{"::not a url", "postgres://host:port:x/db", "mysql://x"} {
		if _, err := Open(bad, Options{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Open(%q): %v, want ErrInvalid", bad, err)
		}
	}
	err := Options{Dimension: -1, OpTimeout: -1, ConnectTimeout: -1, MaxConns: -1}.Validate()
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Validate: %v", err)
	}
	for _, field := range []string{"Dimension", "OpTimeout", "ConnectTimeout", "MaxConns"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("Validate does not report %s: %v", field, err)
		}
	}
	if _, err := Open("postgres://127.0.0.1/x", Options{MaxConns: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Open with bad options: %v", err)
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("DefaultOptions: %v", err)
	}
}

// TestOpTimeout: a call that gets no answer within OpTimeout (here: a
// table locked by another session) fails with ErrUnavailable saying so,
// commits nothing, and the Store works again once the lock is gone.
func TestOpTimeout(t *testing.T) {
	url := newDB(t)
	// The writes and checks around the lock go through a store with the
	// default timeout: on a loaded machine an unlocked call can take
	// longer than 300ms too.
	base := open(t, url, Options{})
	must(t, base.Put(mem("ns", "a", "x"), nil))
	s := open(t, url, Options{OpTimeout: 300 * time.Millisecond})
	c := sqlConn(t, url)
	tx, err := c.Begin(context.Background())
	must(t, err)
	_, err = tx.Exec(context.Background(), `LOCK TABLE rerankd_namespaces IN ACCESS EXCLUSIVE MODE`)
	must(t, err)
	t0 := time.Now()
	wantUnavailable(t, "Put against a locked table", s.Put(mem("ns", "b", "x"), nil), "no answer within 300ms")
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("Put took %v with OpTimeout 300ms", d)
	}
	_, err = s.Count("ns")
	wantUnavailable(t, "Count against a locked table", err)
	must(t, tx.Rollback(context.Background()))
	eventually(t, "Count after the lock", func() error { _, err := s.Count("ns"); return err })
	if _, err := base.Get("ns", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the timed-out Put was applied: %v", err)
	}
	n, err := base.Count("ns")
	must(t, err)
	if n != 1 {
		t.Fatalf("Count = %d, want 1", n)
	}
}
