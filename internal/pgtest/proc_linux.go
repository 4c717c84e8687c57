package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// sigFastShutdown is what pg_ctl stop -m fast sends.
const sigFastShutdown = syscall.SIGINT

// runAs is the user the server runs as when the tests run as root; a nil
// *runAs is the current user.
type runAs struct {
	name     string
	uid, gid uint32
}

// serverUser is nil unless the process is root, then the postgres user.
func serverUser() (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(osUser)
	if err != nil {
		return nil, fmt.Errorf("%w: the tests run as root, which PostgreSQL refuses, and there is no %q user to run it as (%w)", ErrNotInstalled, osUser, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s: uid %q, gid %q", osUser, u.Uid, u.Gid)
	}
	return &runAs{name: osUser, uid: uint32(uid), gid: uint32(gid)}, nil
}

// apply makes cmd run as r.
func (r *runAs) apply(cmd *exec.Cmd) {
	if r == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: r.uid, Gid: r.gid, Groups: []uint32{r.gid}}
}

// chown gives path to r.
func (r *runAs) chown(path string) error {
	if r == nil {
		return nil
	}
	return os.Chown(path, int(r.uid), int(r.gid))
}

// ownerFile records, in each server's folder, the pid and start time of
// the process that made it, for sweep.
const (
	ownerFile    = "pgtest.owner"
	folderPrefix = "rerankd-pgtest-"
)

var sweepOnce sync.Once

// newFolder makes a new server folder, owned by r, in the temporary
// directory (in /tmp when r could not reach that), first removing the
// folders of dead test processes.
func newFolder(r *runAs) (string, error) {
	base := os.TempDir()
	if r != nil && !reachable(base) {
		if !reachable("/tmp") {
			return "", fmt.Errorf("neither %s nor /tmp can be entered by user %s", base, r.name)
		}
		base = "/tmp"
	}
	sweepOnce.Do(func() { sweep(base) })
	dir, err := os.MkdirTemp(base, folderPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	self, _ := procStat(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), fmt.Appendf(nil, "%d %s\n", os.Getpid(), self.start), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	if err := r.chown(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// reachable reports whether every folder from / to dir can be entered by
// others (their execute bit), approximately what another user needs.
func reachable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// sweep removes base's server folders whose owner process is gone and
// whose postmaster is not running (neither its pid nor its port answers):
// those of test binaries that were killed.
func sweep(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, folderPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being made, or not ours
		}
		var pid int
		var start string
		if n, _ := fmt.Sscan(string(b), &pid, &start); n < 1 || alive(pid, start) {
			continue
		}
		if postmasterRunning(filepath.Join(dir, "data")) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

func postmasterRunning(dataDir string) bool {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(lines[0])); err == nil && alive(pid, "") {
		return true
	}
	if len(lines) > 3 {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strings.TrimSpace(lines[3])), time.Second); err == nil {
			_ = c.Close()
			return true
		}
	}
	return false
}

type stat struct {
	pid   int
	state byte
	ppid  int
	start string // clock ticks after boot; with pid, names one process
}

// procStat reads /proc/pid/stat.
func procStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name (field 2) is in parentheses and may hold anything.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 20 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return stat{pid: pid, state: f[0][0], ppid: ppid, start: f[19]}, true
}

// alive reports whether process pid exists and is not a zombie (and, when
// start is given, is the one that started then).
func alive(pid int, start string) bool {
	st, ok := procStat(pid)
	return ok && st.state != 'Z' && (start == "" || st.start == start)
}

// children lists the processes whose parent is pid.
func children(pid int) []stat {
	entries, _ := os.ReadDir("/proc")
	var kids []stat
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(n); ok && st.ppid == pid {
			kids = append(kids, st)
		}
	}
	return kids
}

// The spawner is one goroutine locked to its OS thread for the life of the
// process. Every postmaster is started from it with a parent-death signal,
// which Linux sends when the parent *thread* exits: an ordinary goroutine's
// thread could later be locked by another goroutine and exit with it,
// taking the server down mid-test.
var spawner struct {
	once sync.Once
	req  chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startOrphanProof starts cmd in its own process group (a terminal's ^C
// reaches the test process, not the server) with SIGQUIT (PostgreSQL's
// immediate shutdown) as its parent-death signal, so that the server dies
// with the test process however that dies.
func startOrphanProof(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	cmd.SysProcAttr.Setpgid = true
	spawner.once.Do(func() {
		spawner.req = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked, and this goroutine never returns
			for r := range spawner.req {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.req <- spawnReq{cmd, done}
	return <-done
}

// killTree crashes a running postmaster: SIGSTOP (so it forks no more),
// SIGKILL to it and to each of its children, then waits until all are gone.
// PostgreSQL's children call setsid, so a process-group kill would miss them.
func killTree(p *postmaster) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	kids := children(p.cmd.Process.Pid)
	_ = p.cmd.Process.Kill()
	for _, k := range kids {
		_ = syscall.Kill(k.pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(30 * time.Second)
	select {
	case <-p.done:
	case <-time.After(time.Until(deadline)):
		return fmt.Errorf("pgtest: postmaster %d still running 30 s after SIGKILL", p.cmd.Process.Pid)
	}
	for _, k := range kids {
		for alive(k.pid, k.start) {
			if time.Now().After(deadline) {
				return fmt.Errorf("pgtest: server process %d still running 30 s after SIGKILL", k.pid)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}
