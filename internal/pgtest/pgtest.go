package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/internal/testenv"
)

const (
	roleName = "rerankd"
	rolePass = "rerankd-test-pw"
	osUser   = "postgres" // the user the server runs as under root

	// BinEnv names a folder holding initdb and postgres, used instead of
	// the search in /usr/lib/postgresql and on PATH (read by testenv.PGBin).
	BinEnv = testenv.PGBinEnv

	startTimeout = 60 * time.Second
	stopTimeout  = 60 * time.Second
	adminTimeout = 60 * time.Second
)

// ErrNotInstalled is wrapped by the errors of Available and of a start that
// cannot run PostgreSQL on this machine; Start and Shared skip on it (fail
// under CI).
var ErrNotInstalled = errors.New("PostgreSQL server binaries not found")

const enableHint = "install Debian's postgresql package: scripts/setup_postgres.sh (make test runs it)"

// Available returns the folder holding the PostgreSQL server binaries
// (initdb, postgres) that Start uses: $RERANKD_PG_BIN when set, else the
// newest /usr/lib/postgresql/<major>/bin, else the folder of postgres on
// PATH. The error wraps ErrNotInstalled.
func Available() (binDir string, err error) {
	if d := testenv.PGBin(); d != "" {
		if !hasServer(d) {
			return "", fmt.Errorf("%w in %s=%s (needs initdb and postgres)", ErrNotInstalled, BinEnv, d)
		}
		return d, nil
	}
	if d := newestDebian("/usr/lib/postgresql"); d != "" {
		return d, nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasServer(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if hasServer(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	return "", fmt.Errorf("%w (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH", ErrNotInstalled)
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// newestDebian is root/<major>/bin for the highest major (compared as
// numbers: 9.6 < 10 < 15) that holds the server binaries, or "".
func newestDebian(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return ""
	}
	best, bestVer := "", []int(nil)
	for _, e := range entries {
		ver, ok := parseVersion(e.Name())
		dir := filepath.Join(root, e.Name(), "bin")
		if !ok || !hasServer(dir) {
			continue
		}
		if bestVer == nil || slices.Compare(ver, bestVer) > 0 {
			best, bestVer = dir, ver
		}
	}
	return best
}

func parseVersion(s string) ([]int, bool) {
	var v []int
	for part := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

// Option changes how Start configures a server.
type Option func(*options)

type options struct {
	settings []string // name=value, passed as -c
}

// NoFsync turns fsync (and synchronous_commit, full_page_writes) off: faster
// commits for benchmarks, but the server no longer survives an OS crash.
// (Kill, a process crash, still loses no committed data: the page cache
// survives it.)
func NoFsync() Option {
	return func(o *options) {
		o.settings = append(o.settings, "fsync=off", "synchronous_commit=off", "full_page_writes=off")
	}
}

// Setting sets a server parameter (postgres -c name=value) for every start
// of the server; it overrides the harness's own settings.
func Setting(name, value string) Option {
	return func(o *options) { o.settings = append(o.settings, name+"="+value) }
}

// Server is a PostgreSQL server this process started for tests. Its methods
// are safe for concurrent use.
type Server struct {
	bin      string
	run      *runAs // nil: the current user
	dir      string // owned by run: data/, server.log, the owner record
	port     int
	settings []string
	shared   bool
	dbSeq    atomic.Int64

	mu   sync.Mutex
	proc *postmaster // nil when stopped
}

// postmaster is one run of the server.
type postmaster struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	err  error         // cmd.Wait's, valid after done
}

// Start starts a new server for t and registers t.Cleanup to stop it and
// remove its files (when t failed, the end of the server log is logged
// first). Without PostgreSQL it skips t, naming the package to install; under
// CI=true it fails t instead.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	skipShort(t)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s, err := newServer(o)
	if err != nil {
		fail(t, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pgtest: end of %s:\n%s", s.LogPath(), logTail(s.LogPath()))
		}
		if err := s.close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// skipShort skips t under -short (make test-short, the developer's inner
// loop): starting servers is most of those tests' CPU, and make test runs
// every test that needs one.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: no PostgreSQL server under -short (make test starts them)")
	}
}

func fail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) {
		testenv.SkipUnlessCI(t, "pgtest: "+err.Error(), enableHint)
	}
	t.Fatalf("pgtest: %v", err)
}

var (
	mainActive atomic.Bool
	shared     struct {
		once sync.Once
		srv  *Server
		err  error
	}
)

// Shared returns the test binary's shared server, started on first use and
// stopped by Main (TestMain must call Main; Shared fails t otherwise). Use
// NewDB for a database of the test's own. Stop, StartAgain, Restart and Kill
// are refused on it: fault tests Start their own server.
func Shared(t testing.TB) *Server {
	t.Helper()
	skipShort(t)
	if !mainActive.Load() {
		t.Fatal("pgtest.Shared needs TestMain to call pgtest.Main(m), which stops the shared server")
	}
	shared.once.Do(func() {
		shared.srv, shared.err = newServer(options{})
		if shared.err == nil {
			shared.srv.shared = true
		}
	})
	if shared.err != nil {
		fail(t, shared.err)
	}
	return shared.srv
}

// Main is for TestMain: it runs m.Run, then stops the shared server (when
// started) and removes the template cluster, and exits with m.Run's code.
// With Main, initdb runs once per binary: servers copy its template cluster.
func Main(m *testing.M) {
	mainActive.Store(true)
	code := m.Run()
	mainActive.Store(false)
	if s := shared.srv; s != nil {
		if err := s.close(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stopping the shared server: %v\n", err)
		}
	}
	removeTemplate()
	os.Exit(code)
}

// URL returns the URL of database db for the password role User.
func (s *Server) URL(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(roleName, rolePass),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on (127.0.0.1 only), the same
// across StartAgain and Restart.
func (s *Server) Port() int { return s.port }

// User is the name of the role tests connect as, a superuser with Password.
func (s *Server) User() string { return roleName }

// Password is User's password.
func (s *Server) Password() string { return rolePass }

// LogPath is the server's log file (initdb's output, then each start's).
func (s *Server) LogPath() string { return filepath.Join(s.dir, "server.log") }

// DataDir is the server's data directory (owned by the postgres user when the
// tests run as root).
func (s *Server) DataDir() string { return filepath.Join(s.dir, "data") }

// PID is the postmaster's process id, 0 when the server is stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

var errShared = errors.New("pgtest: Stop, StartAgain, Restart and Kill are refused on the Shared server (other tests use it); Start a server of your own")

// Stop shuts the server down as pg_ctl stop -m fast does (SIGINT: clients
// are disconnected, open transactions rolled back, a shutdown checkpoint
// written) and waits for it to exit, keeping its data. Stopping a stopped
// server does nothing.
func (s *Server) Stop() error {
	if s.shared {
		return errShared
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

// StartAgain starts a stopped (or killed) server on the same port and data.
func (s *Server) StartAgain() error {
	if s.shared {
		return errShared
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("pgtest: StartAgain: the server is running")
	}
	return s.launchLocked(true)
}

// Restart stops the server (fast) and starts it again on the same port and
// data.
func (s *Server) Restart() error {
	if s.shared {
		return errShared
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopLocked(); err != nil {
		return err
	}
	return s.launchLocked(true)
}

// Kill crashes the server: it freezes the postmaster, SIGKILLs it and every
// process it started (backends, checkpointer, WAL writer...), and returns
// once they are all gone. Committed data must survive; StartAgain runs crash
// recovery.
func (s *Server) Kill() error {
	if s.shared {
		return errShared
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("pgtest: Kill: the server is not running")
	}
	err := killTree(s.proc)
	s.proc = nil
	return err
}

// NewDB creates a new empty database owned by User, with a unique name made
// from t's, and returns its URL. On the shared server the database is dropped
// when t ends.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	name := s.dbName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" OWNER "+roleName); err != nil {
		t.Fatalf("pgtest: NewDB: %v", err)
	}
	if s.shared {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
			defer cancel()
			if err := s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
				t.Logf("pgtest: dropping %s: %v", name, err)
			}
		})
	}
	return s.URL(name)
}

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

// dbName is "t_<test name>_<n>", at most 63 bytes (PostgreSQL's limit).
func (s *Server) dbName(test string) string {
	n := strconv.FormatInt(s.dbSeq.Add(1), 10)
	base := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(test), "_"), "_")
	if room := 63 - len("t__") - len(n); len(base) > room {
		base = base[:room]
	}
	return "t_" + base + "_" + n
}

// admin runs sql in database postgres.
func (s *Server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(ctx, sql)
	return err
}

// newServer makes a cluster (a copy of the template under Main, else
// initdb) in a new folder and starts it on a free port.
func newServer(o options) (s *Server, err error) {
	bin, err := Available()
	if err != nil {
		return nil, err
	}
	run, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := newFolder(run)
	if err != nil {
		return nil, err
	}
	s = &Server{bin: bin, run: run, dir: dir, settings: o.settings}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	if mainActive.Load() {
		tmpl, err := template(bin, run)
		if err != nil {
			return nil, err
		}
		// cp -a keeps the owner (postgres, under root) and the modes
		// PostgreSQL insists on.
		if out, err := exec.Command("cp", "-a", filepath.Join(tmpl.dir, "data"), s.DataDir()).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copying the template cluster: %w: %s", err, out)
		}
	} else if err := s.initdb(); err != nil {
		return nil, err
	}
	if err := s.launchNewPort(); err != nil {
		return nil, err
	}
	return s, nil
}

// hba: every role connects over loopback TCP with its password (Unix
// sockets are off).
const hba = `# pgtest (internal/pgtest): loopback only, password required.
host all all 127.0.0.1/32 scram-sha-256
`

// initdb makes the cluster, with the test role as its bootstrap superuser
// and the role's password set from a file: ready without a first start.
// (-A scram-sha-256 also makes initdb store that password as SCRAM and set
// password_encryption so, on every PostgreSQL since 10.)
func (s *Server) initdb() error {
	log, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	pwfile := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(rolePass+"\n"), 0o600); err != nil {
		return err
	}
	defer func() { _ = os.Remove(pwfile) }()
	if err := s.run.chown(pwfile); err != nil {
		return err
	}
	var initErr error
	for _, locale := range []string{"C.UTF-8", "C"} {
		fmt.Fprintf(log, "pgtest: initdb --locale=%s\n", locale)
		cmd := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.DataDir(), "-U", roleName, "--pwfile="+pwfile,
			"-A", "scram-sha-256", "-E", "UTF8", "--locale="+locale, "--no-sync")
		cmd.Stdout, cmd.Stderr = log, log
		cmd.Env = serverEnv()
		cmd.Dir = s.dir
		s.run.apply(cmd)
		if initErr = cmd.Run(); initErr == nil {
			break
		}
		_ = os.RemoveAll(s.DataDir())
	}
	if initErr != nil {
		return fmt.Errorf("initdb: %w\n%s", initErr, logTail(s.LogPath()))
	}
	path := filepath.Join(s.DataDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		return err
	}
	return s.run.chown(path)
}

// launchNewPort starts the server on a free port, trying again on another
// when one is taken between the probe and the bind.
func (s *Server) launchNewPort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.launchLocked(false); err == nil || !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var errPortTaken = errors.New("port taken")

// launchLocked starts the postmaster on s.port and waits until it accepts
// connections. samePort: the port was the server's before (StartAgain), so a
// taken port is waited for a little instead of reported as errPortTaken.
func (s *Server) launchLocked(samePort bool) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := s.launchOnce()
		if err == nil || !errors.Is(err, errPortTaken) || !samePort || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *Server) launchOnce() error {
	log, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	logStart, _ := log.Seek(0, 2)
	fmt.Fprintf(log, "pgtest: starting on 127.0.0.1:%d\n", s.port)
	args := []string{"-D", s.DataDir()}
	for _, kv := range append([]string{
		"listen_addresses=127.0.0.1",
		"port=" + strconv.Itoa(s.port),
		"unix_socket_directories=",
		"max_connections=200",
		"TimeZone=UTC",
		"log_timezone=UTC",
		"logging_collector=off",
	}, s.settings...) {
		args = append(args, "-c", kv)
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = serverEnv()
	cmd.Dir = s.dir
	s.run.apply(cmd)
	err = startOrphanProof(cmd)
	_ = log.Close()
	if err != nil {
		return fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &postmaster{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := s.waitReady(p); err != nil {
		_ = killTree(p)
		tail := logTailFrom(s.LogPath(), logStart)
		if strings.Contains(tail, "could not bind") || strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("%w\n--- %s ---\n%s", err, s.LogPath(), tail)
	}
	s.proc = p
	return nil
}

// waitReady waits until the postmaster reports "ready" in postmaster.pid
// (as pg_ctl -w does), then until a real connection succeeds.
func (s *Server) waitReady(p *postmaster) error {
	deadline := time.Now().Add(startTimeout)
	pid := p.cmd.Process.Pid
	for !pidFileReady(s.DataDir(), pid) {
		select {
		case <-p.done:
			return fmt.Errorf("postgres exited during start-up: %w", p.err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v", startTimeout)
		}
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		select {
		case <-p.done:
			return fmt.Errorf("postgres exited during start-up: %w", p.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not accepting connections after %v: %w", startTimeout, err)
		}
	}
}

// pidFileReady reports whether dataDir/postmaster.pid names pid and has the
// status "ready" (line 8, PostgreSQL 10 and later).
func pidFileReady(dataDir string, pid int) bool {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) > 7 && strings.TrimSpace(lines[0]) == strconv.Itoa(pid) && strings.TrimSpace(lines[7]) == "ready"
}

func (s *Server) stopLocked() error {
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if err := p.cmd.Process.Signal(sigFastShutdown); err != nil {
		select {
		case <-p.done: // it had exited already
			return fmt.Errorf("pgtest: the server had exited: %w\n%s", p.err, logTail(s.LogPath()))
		default:
			return err
		}
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("pgtest: stop: postgres exited with %w\n%s", p.err, logTail(s.LogPath()))
		}
		return nil
	case <-time.After(stopTimeout):
		_ = killTree(p)
		return fmt.Errorf("pgtest: the server did not stop within %v of SIGINT; killed it\n%s", stopTimeout, logTail(s.LogPath()))
	}
}

// close stops the server (killing it when it will not stop) and removes its
// folder.
func (s *Server) close() error {
	s.mu.Lock()
	err := s.stopLocked()
	s.mu.Unlock()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// logTail is the end of the file at path (its last 40 lines, at most 8 KiB).
func logTail(path string) string { return logTailFrom(path, 0) }

func logTailFrom(path string, from int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if from > 0 && from <= int64(len(b)) {
		b = b[from:]
	}
	if len(b) > 8192 {
		b = b[len(b)-8192:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// serverEnv is the environment without PG* variables (PGPORT, PGDATA...),
// which would otherwise change what initdb and postgres do.
func serverEnv() []string {
	env := os.Environ()
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PG") })
}

// The template: a cluster made by initdb (never started) under Main, for
// servers to copy.
var tmpl struct {
	mu  sync.Mutex
	srv *Server
}

func template(bin string, run *runAs) (*Server, error) {
	tmpl.mu.Lock()
	defer tmpl.mu.Unlock()
	if tmpl.srv != nil {
		return tmpl.srv, nil
	}
	dir, err := newFolder(run)
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, run: run, dir: dir}
	if err := s.initdb(); err != nil {
		_ = s.close()
		return nil, fmt.Errorf("template cluster: %w", err)
	}
	tmpl.srv = s
	return s, nil
}

func removeTemplate() {
	tmpl.mu.Lock()
	defer tmpl.mu.Unlock()
	if tmpl.srv != nil {
		_ = tmpl.srv.close()
		tmpl.srv = nil
	}
}
