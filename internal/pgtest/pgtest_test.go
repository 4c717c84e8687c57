//go:build linux

package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec1(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, conn *pgx.Conn, table string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func show(t *testing.T, conn *pgx.Conn, name string) string {
	t.Helper()
	var v string
	if err := conn.QueryRow(context.Background(), "SHOW "+name).Scan(&v); err != nil {
		t.Fatalf("SHOW %s: %v", name, err)
	}
	return v
}

func TestStart(t *testing.T) {
	t0 := time.Now()
	s := Start(t)
	t.Logf("server %s started in %v on port %d", s.bin, time.Since(t0).Round(time.Millisecond), s.Port())
	dsn := s.NewDB(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if u.Scheme != "postgres" || u.User.Username() != s.User() || pw != s.Password() ||
		u.Host != "127.0.0.1:"+strconv.Itoa(s.Port()) || u.Query().Get("sslmode") != "disable" {
		t.Fatalf("NewDB URL %s: want postgres://%s:%s@127.0.0.1:%d/NAME?sslmode=disable", dsn, s.User(), s.Password(), s.Port())
	}
	if s.User() != "rerankd" || s.Password() != "rerankd-test-pw" {
		t.Errorf("User, Password = %q, %q", s.User(), s.Password())
	}
	conn := connect(t, dsn)
	var who, db string
	var super bool
	if err := conn.QueryRow(context.Background(),
		"SELECT current_user, current_database(), rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&who, &db, &super); err != nil {
		t.Fatal(err)
	}
	if who != "rerankd" || db != strings.TrimPrefix(u.Path, "/") || !super {
		t.Errorf("connected as %s (superuser %v) to %s", who, super, db)
	}
	var scram bool
	if err := conn.QueryRow(context.Background(),
		"SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = current_user").Scan(&scram); err != nil {
		t.Fatal(err)
	}
	if !scram {
		t.Error("the role's password is not stored as SCRAM")
	}
	for name, want := range map[string]string{
		"fsync":                   "on",
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": "",
		"server_encoding":         "UTF8",
		"TimeZone":                "UTC",
	} {
		if got := show(t, conn, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if n, _ := strconv.Atoi(show(t, conn, "max_connections")); n < 200 {
		t.Errorf("max_connections = %d, want >= 200", n)
	}
	if got := show(t, conn, "data_directory"); got != s.DataDir() {
		t.Errorf("data_directory = %s, want %s", got, s.DataDir())
	}
	// As root, the server runs as postgres and owns its data.
	fi, err := os.Stat(s.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	owner := fi.Sys().(*syscall.Stat_t).Uid
	if os.Geteuid() == 0 && owner == 0 {
		t.Errorf("data directory owned by root")
	}
	if os.Geteuid() != 0 && int(owner) != os.Geteuid() {
		t.Errorf("data directory owned by uid %d, not the current user", owner)
	}
}

func TestPassword(t *testing.T) {
	s := Shared(t)
	dsn := s.NewDB(t)
	connect(t, dsn) // the right password works
	for _, pw := range []string{"wrong", ""} {
		u, _ := url.Parse(dsn)
		u.User = url.UserPassword(s.User(), pw)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		conn, err := pgx.Connect(ctx, u.String())
		cancel()
		if err == nil {
			conn.Close(context.Background())
			t.Fatalf("password %q accepted", pw)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" { // invalid_password
			t.Errorf("password %q: %v, want SQLSTATE 28P01", pw, err)
		}
	}
}

func TestNewDBIsolated(t *testing.T) {
	s := Shared(t)
	a, b := s.NewDB(t), s.NewDB(t)
	if a == b {
		t.Fatalf("NewDB returned %s twice", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	exec1(t, ca, "CREATE TABLE m (id int)")
	exec1(t, ca, "INSERT INTO m VALUES (1)")
	var exists bool
	if err := cb.QueryRow(context.Background(), "SELECT to_regclass('m') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("a table made in one NewDB database is visible in another")
	}
	var tables int
	if err := cb.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("a new database has %d tables", tables)
	}
}

// Parallel tests on the shared server each get their own database, named
// after the test, within PostgreSQL's 63-byte limit.
func TestNewDBParallel(t *testing.T) {
	s := Shared(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 8 {
		t.Run(fmt.Sprintf("a_very_long_subtest_name_that_does_not_fit_in_an_identifier_%d", i), func(t *testing.T) {
			t.Parallel()
			dsn := s.NewDB(t)
			u, _ := url.Parse(dsn)
			name := strings.TrimPrefix(u.Path, "/")
			if len(name) > 63 || !strings.HasPrefix(name, "t_testnewdbparallel_") {
				t.Errorf("database name %q", name)
			}
			mu.Lock()
			dup := seen[name]
			seen[name] = true
			mu.Unlock()
			if dup {
				t.Errorf("database %s made twice", name)
			}
			exec1(t, connect(t, dsn), "CREATE TABLE m (id int)")
		})
	}
}

// The shared server's databases are dropped when their test ends.
func TestSharedDropsDB(t *testing.T) {
	s := Shared(t)
	if Shared(t) != s {
		t.Fatal("Shared returned two servers")
	}
	var name string
	t.Run("sub", func(t *testing.T) {
		u, _ := url.Parse(s.NewDB(t))
		name = strings.TrimPrefix(u.Path, "/")
	})
	conn := connect(t, s.URL("postgres"))
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test", name)
	}
	for _, f := range []func() error{s.Stop, s.StartAgain, s.Restart, s.Kill} {
		if err := f(); !errors.Is(err, errShared) {
			t.Errorf("fault method on the shared server: %v, want refusal", err)
		}
	}
}

func TestRestart(t *testing.T) {
	s := Start(t)
	dsn := s.NewDB(t)
	conn := connect(t, dsn)
	exec1(t, conn, "CREATE TABLE m (id int)")
	exec1(t, conn, "INSERT INTO m SELECT generate_series(1, 100)")
	port, pid := s.Port(), s.PID()
	t0 := time.Now()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(t0).Round(time.Millisecond))
	if s.Port() != port || !strings.Contains(dsn, ":"+strconv.Itoa(port)+"/") {
		t.Errorf("port changed: %d -> %d", port, s.Port())
	}
	if s.PID() == pid || s.PID() == 0 {
		t.Errorf("postmaster pid %d -> %d", pid, s.PID())
	}
	if err := conn.Ping(context.Background()); err == nil {
		t.Error("a connection survived the restart")
	}
	if n := count(t, connect(t, dsn), "m"); n != 100 {
		t.Errorf("%d rows after restart, want 100", n)
	}
}

func TestStop(t *testing.T) {
	s := Start(t)
	dsn := s.NewDB(t)
	conn := connect(t, dsn)
	exec1(t, conn, "CREATE TABLE m (id int)")
	exec1(t, conn, "INSERT INTO m VALUES (1)")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.PID() != 0 {
		t.Errorf("PID = %d after Stop", s.PID())
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := conn.Ping(context.Background()); err == nil {
		t.Error("an open connection still works after Stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, dsn); err == nil {
		c.Close(context.Background())
		t.Fatal("a new connection succeeded after Stop")
	} else if !strings.Contains(err.Error(), "refused") {
		t.Errorf("connecting after Stop: %v, want connection refused", err)
	}
	if err := s.Kill(); err == nil {
		t.Error("Kill of a stopped server succeeded")
	}
	if err := s.StartAgain(); err != nil {
		t.Fatal(err)
	}
	if err := s.StartAgain(); err == nil {
		t.Error("StartAgain of a running server succeeded")
	}
	if n := count(t, connect(t, dsn), "m"); n != 1 {
		t.Errorf("%d rows after Stop and StartAgain, want 1", n)
	}
}

func TestKill(t *testing.T) {
	s := Start(t)
	dsn := s.NewDB(t)
	conn := connect(t, dsn)
	exec1(t, conn, "CREATE TABLE m (id int)")
	exec1(t, conn, "INSERT INTO m SELECT generate_series(1, 1000)")
	// An open transaction's rows must not survive the crash.
	open := connect(t, dsn)
	tx, err := open.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), "INSERT INTO m SELECT generate_series(1, 500)"); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	kids := children(pid)
	if len(kids) < 3 {
		t.Fatalf("postmaster %d has %d children; want its background processes and 2 backends", pid, len(kids))
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(kids, stat{pid: pid}) {
		if alive(k.pid, k.start) {
			t.Errorf("process %d survived Kill", k.pid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, dsn); err == nil {
		c.Close(context.Background())
		t.Fatal("connected to a killed server")
	}
	t0 := time.Now()
	if err := s.StartAgain(); err != nil {
		t.Fatal(err)
	}
	t.Logf("start after kill (crash recovery) took %v", time.Since(t0).Round(time.Millisecond))
	if n := count(t, connect(t, dsn), "m"); n != 1000 {
		t.Errorf("%d rows after crash and recovery, want the 1000 committed", n)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), "not properly shut down") {
		t.Errorf("the server log shows no crash recovery:\n%s", logTail(s.LogPath()))
	}
}

func TestOptions(t *testing.T) {
	s := Start(t, NoFsync(), Setting("work_mem", "7MB"))
	conn := connect(t, s.NewDB(t))
	if got := show(t, conn, "fsync"); got != "off" {
		t.Errorf("fsync = %s with NoFsync", got)
	}
	if got := show(t, conn, "work_mem"); got != "7MB" {
		t.Errorf("work_mem = %s, want 7MB", got)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := show(t, connect(t, s.NewDB(t)), "work_mem"); got != "7MB" {
		t.Errorf("work_mem = %s after Restart, want 7MB", got)
	}
}

const orphanEnv = "PGTEST_ORPHAN_CHILD"

// A test binary killed with SIGKILL leaves no server behind, and the next
// one removes its folder.
func TestKilledBinaryLeavesNoServer(t *testing.T) {
	if os.Getenv(orphanEnv) == "1" {
		s := Start(t)
		fmt.Printf("server %d %s\n", s.PID(), s.dir)
		time.Sleep(time.Minute)
		return
	}
	if _, err := Available(); err != nil {
		Start(t) // skips, or fails under CI
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledBinaryLeavesNoServer$", "-test.v")
	cmd.Env = append(os.Environ(), orphanEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "server %d %s", &pid, &dir); n == 2 {
			break
		}
	}
	if pid == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the child test binary printed no server")
	}
	pm, _ := procStat(pid)
	kids := children(pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range append(kids, pm) {
		for alive(p.pid, p.start) {
			if time.Now().After(deadline) {
				t.Fatalf("server process %d outlived its killed test binary", p.pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed binary's folder: %v", err)
	}
	sweep(filepath.Dir(dir))
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sweep left %s (%v)", dir, err)
	}
}

func TestAvailable(t *testing.T) {
	t.Setenv(BinEnv, t.TempDir())
	if _, err := Available(); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("%s without binaries: %v", BinEnv, err)
	}
	root := t.TempDir()
	for _, v := range []string{"9.6", "13", "15", "16", "x"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if v == "16" {
			continue // no binaries: not a candidate
		}
		for _, name := range []string{"initdb", "postgres"} {
			if err := os.WriteFile(filepath.Join(bin, name), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, want := newestDebian(root), filepath.Join(root, "15", "bin"); got != want {
		t.Errorf("newestDebian = %s, want %s", got, want)
	}
}

func TestDBName(t *testing.T) {
	s := &Server{}
	if got := s.dbName("TestX/Sub-Case #1"); got != "t_testx_sub_case_1_1" {
		t.Errorf("dbName = %q", got)
	}
	if got := s.dbName(strings.Repeat("a", 100)); len(got) != 63 || !strings.HasSuffix(got, "_2") {
		t.Errorf("dbName of a long name = %q (%d bytes)", got, len(got))
	}
}
