// Package pgtest starts real PostgreSQL servers for tests: Debian's
// `postgresql` package, never a mock, never the Debian default cluster and
// never systemd.
//
// # What it starts
//
// Start (one server for one test) and Shared (one server per test binary)
// run initdb into a new folder under the temporary directory
// ($TMPDIR/rerankd-pgtest-<pid>-*) and start the postmaster on it as a
// child of the test process:
//
//   - binaries: $RERANKD_PG_BIN when set, else the newest major version in
//     /usr/lib/postgresql/<major>/bin, else initdb and postgres on PATH
//     (Available says which, or why none);
//   - listening on 127.0.0.1 only, on a free port picked at start (kept by
//     StartAgain and Restart), with Unix sockets disabled;
//   - max_connections=200, TimeZone=UTC, encoding UTF8 with the C.UTF-8
//     locale (C where that locale is missing), fsync on (the default:
//     durability tests rely on honest commits; the NoFsync option turns it
//     off for benchmarks), the server log in the folder (LogPath);
//   - one role, User() = "rerankd", the cluster's superuser (initdb -U),
//     with Password() = "rerankd-test-pw": every connection, the harness's
//     included, authenticates with a password over loopback TCP (SCRAM), so
//     a wrong password is refused as in production. There is no `postgres`
//     role.
//
// NewDB creates an empty database owned by that role and returns its URL
// (postgres://rerankd:rerankd-test-pw@127.0.0.1:PORT/NAME?sslmode=disable).
//
// When TestMain calls Main, initdb runs once per test binary, into a
// template cluster that each server copies (cp -a, about 0.2 s, instead of
// about 2 s of initdb); Main removes it.
//
// # Root
//
// PostgreSQL refuses to run as root, and CI runs as root. When the test
// process is root, initdb and the postmaster run as the package's `postgres`
// user (set as the child's credentials; no sudo, runuser or setpriv needed)
// and the server's folder is owned by that user; the temporary directory must
// then be reachable by it (a $TMPDIR under a folder only root can enter is
// replaced by /tmp). Otherwise they run as the current user.
//
// # Skip or fail
//
// Without server binaries (or, as root, without the `postgres` user that the
// Debian package creates) Start and Shared skip the test with a message
// naming the package and scripts/setup_postgres.sh (make test runs it); under
// CI=true they fail instead (testenv.SkipUnlessCI): a database test that CI
// skips proves nothing. Any other start failure fails the test, with the end
// of the server log in the message. Under -short (make test-short, the
// developer's inner loop) Start and Shared skip, CI=true or not: make test
// runs every test that needs a server.
//
// # Fault injection
//
// Stop shuts the server down as `pg_ctl stop -m fast` does (SIGINT to the
// postmaster) and keeps its data; StartAgain starts it again on the same port
// and data; Restart is both. Kill simulates a crash: it freezes the
// postmaster, SIGKILLs it and every process it started, and waits until they
// are gone; StartAgain then runs crash recovery. These are refused on the
// Shared server, which parallel tests use: fault tests Start their own.
//
// # Cleanup
//
// Start registers t.Cleanup (which also runs when the test panics) to stop the
// server and remove its folder; when the test failed it logs the end of the
// server log first. Main stops the shared server and removes the template
// after m.Run. Shared requires Main (it fails the test otherwise), and NewDB
// on the shared server drops the database when the test ends.
//
// A test binary that is killed cannot clean up, so:
//
//   - every postmaster is started from one OS thread locked for the life of
//     the process, with the parent-death signal SIGQUIT (PostgreSQL's
//     immediate shutdown): the kernel delivers it when the test process dies
//     however it dies (SIGKILL, a timeout panic, os.Exit), and the
//     postmaster takes its backends down with it;
//   - the folders such a process leaves behind (data and log) stay in the
//     temporary directory until the next test binary that uses pgtest starts
//     a server: it removes every rerankd-pgtest-* folder whose owning process
//     (pid and start time, recorded in the folder) is gone and whose
//     postmaster is not running.
//
// The limit: a postmaster whose test process is SIGKILLed while Kill has it
// frozen (SIGSTOP) receives SIGQUIT only when continued; and a folder
// shared across PID namespaces (two containers with one /tmp) could be
// judged abandoned while in use by the other.
//
// pgtest is for tests and benchmarks only: it lives under internal/ and
// imports testing.
package pgtest
