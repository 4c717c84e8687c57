package release

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"

	"github.com/rerankd/rerankd/api"
)

// TestImage runs the image archive that `make image-test` names in
// RERANKD_IMAGE_ARCHIVE as a container runtime would, without one: its
// layers unpacked into a root file system, the entry point started as
// the image's user with the image's environment in fresh mount, PID and
// network namespaces (unshare, chroot; root needed), a folder bind-mounted
// as the /data volume. The image's own `rerankd-bench testmodel` writes a tiny
// random-weight model to the volume (its scores mean nothing: the test
// checks that ONNX Runtime loads and runs inside the image); serve runs
// it and answers /health, /ready, /rerank, a memory add and a search;
// SIGTERM stops it cleanly; a restart with the default configuration
// finds the memory on the volume.
func TestImage(t *testing.T) {
	archive := os.Getenv("RERANKD_IMAGE_ARCHIVE")
	if archive == "" {
		t.Skip("RERANKD_IMAGE_ARCHIVE is unset (make image-test sets it)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("running the image needs root (namespaces, chroot, bind mounts)")
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	unpack(t, img, root)
	vol := filepath.Join(t.TempDir(), "data")
	must(t, os.Mkdir(vol, 0o755))
	must(t, os.Chown(vol, 65532, 65532))
	c := container{t: t, cfg: cf.Config, root: root, vol: vol}

	lab := c // the lab binary beside rerankd writes the test model
	lab.cfg.Entrypoint = []string{path.Join(path.Dir(c.cfg.Entrypoint[0]), "rerankd-bench")}
	gen := lab.start([]string{"testmodel", "--size", "tiny", "--seed", "1", "--out", "/data/models/tiny"})
	if err := gen.wait(2 * time.Minute); err != nil {
		t.Fatalf("testmodel in the image: %v\n%s", err, gen.log())
	}

	srv := c.start(nil, "RERANKD_MODEL=/data/models/tiny")
	srv.ready()
	if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.entry())); !regexp.MustCompile(`\nUid:\s+65532\s+65532\s`).Match(st) {
		t.Errorf("serve does not run as uid 65532:\n%s", st)
	}
	srv.check("GET", "/health", nil, http.StatusOK, nil)
	var rr api.RerankResponse
	srv.check("POST", "/rerank", map[string]any{"query": "where do cats sleep", "documents": []string{"cats sleep on the sofa", "tax forms are due in April"}}, http.StatusOK, &rr)
	if len(rr.Results) != 2 || !strings.Contains(rr.Backend, "onnx") {
		t.Errorf("rerank answered %+v: want two results from the ONNX model", rr)
	}
	srv.check("POST", "/v1/memories", map[string]any{"namespace": "agent", "text": "The user's cat Miso sleeps on the blue sofa"}, http.StatusCreated, nil)
	srv.search("Miso sofa", "blue sofa")
	if st, err := os.Stat(filepath.Join(vol, "memories.db")); err != nil || st.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Errorf("memories.db on the volume: %v (owned by the image's user?)", err)
	}
	srv.stop()
	t.Logf("serve's output:\n%s", srv.log())
	// Go names a listener on 0.0.0.0 by the dual-stack [::].
	if !regexp.MustCompile(`\(backend onnx\) on http://(0\.0\.0\.0|\[::\]):8080\n`).MatchString(srv.log()) {
		t.Errorf("serve did not say it serves the model on 0.0.0.0:8080")
	}
	if !strings.Contains(srv.log(), "draining") {
		t.Errorf("no drain on SIGTERM in the log:\n%s", srv.log())
	}

	again := c.start(nil)
	again.ready()
	again.search("Miso sofa", "blue sofa")
	again.stop()
}

// unpack writes the image's flattened file system into root with its
// owners and modes, then the folders a runtime mounts over.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			must(t, os.MkdirAll(p, 0o755))
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			must(t, err)
			_, err = io.Copy(f, tr)
			must(t, errors.Join(err, f.Close()))
		case tar.TypeSymlink:
			must(t, os.Symlink(h.Linkname, p))
		case tar.TypeLink:
			must(t, os.Link(filepath.Join(root, filepath.Clean("/"+h.Linkname)), p))
		default:
			t.Fatalf("%s: entry type %q", h.Name, h.Typeflag)
		}
		if h.Typeflag != tar.TypeSymlink {
			must(t, os.Lchown(p, h.Uid, h.Gid))
			must(t, os.Chmod(p, os.FileMode(h.Mode&0o777)|modeBits(h.Mode)))
		}
	}
	for _, d := range []string{"proc", "dev"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
}

func modeBits(m int64) os.FileMode {
	var b os.FileMode
	if m&0o1000 != 0 {
		b |= os.ModeSticky
	}
	return b
}

// container starts processes of one unpacked image.
type container struct {
	t         *testing.T
	cfg       v1.Config
	root, vol string
}

// runScript sets the namespaces up as a runtime would (the volume, /proc,
// a /dev of the usual four devices, loopback up) and becomes the entry
// point: $1 root, $2 volume, then env -i's arguments. unshare makes the
// new mount namespace private: nothing mounted here shows outside.
const runScript = `set -e
root=$1 vol=$2; shift 2
mount --bind "$vol" "$root/data"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=755 tmpfs "$root/dev"
for d in null zero random urandom; do touch "$root/dev/$d"; mount --bind "/dev/$d" "$root/dev/$d"; done
ip link set lo up
exec /usr/bin/env -i "$@"`

// start runs the entry point with args (nil: the image's command) and
// extra environment, as the image's user.
func (c container) start(args []string, env ...string) *proc {
	c.t.Helper()
	if args == nil {
		args = c.cfg.Cmd
	}
	argv := []string{"--mount", "--net", "--pid", "--fork", "--kill-child", "--", "/bin/sh", "-c", runScript, "sh", c.root, c.vol}
	argv = append(argv, c.cfg.Env...)
	argv = append(argv, env...)
	argv = append(argv, "/usr/sbin/chroot", "--userspec="+c.cfg.User, c.root)
	argv = append(argv, c.cfg.Entrypoint...)
	argv = append(argv, args...)
	p := &proc{t: c.t, cmd: exec.Command("unshare", argv...), done: make(chan struct{})}
	p.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	must(c.t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	c.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// proc is one started container process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  lockedBuffer
	done chan struct{}
	err  error
	pid  int // the entry point's, in this test's PID namespace
}

func (p *proc) log() string { return p.out.String() }

func (p *proc) wait(d time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// entry finds the entry point: unshare's one child.
func (p *proc) entry() int {
	if p.pid != 0 {
		return p.pid
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.cmd.Process.Pid, p.cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) == 1 {
			p.pid, _ = strconv.Atoi(f[0])
			return p.pid
		}
	}
	p.t.Fatalf("no entry point process under unshare:\n%s", p.log())
	return 0
}

// client speaks HTTP to the container's port 8080 from inside its network
// namespace: each connection's socket is made by a thread that joined it.
func (p *proc) client() *http.Client {
	ns := fmt.Sprintf("/proc/%d/ns/net", p.entry())
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			// Never unlocked: the thread, left in the container's
			// namespace, ends with this goroutine.
			runtime.LockOSThread()
			f, err := os.Open(ns)
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer func() { _ = f.Close() }()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, fmt.Errorf("setns: %w", err)}
				return
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// ready waits for /ready to answer 200.
func (p *proc) ready() {
	p.t.Helper()
	c := p.client()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-p.done:
			p.t.Fatalf("the container exited: %v\n%s", p.err, p.log())
		default:
		}
		resp, err := c.Get("http://127.0.0.1:8080/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	p.t.Fatalf("not ready on 0.0.0.0:8080 after 90s:\n%s", p.log())
}

// check sends a request and wants status; the body decodes into out.
func (p *proc) check(method, path string, body any, status int, out any) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		must(p.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://127.0.0.1:8080"+path, rd)
	must(p.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client().Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", method, path, err, p.log())
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		p.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, status)
	}
	if out != nil {
		must(p.t, json.Unmarshal(b, out))
	}
}

// search wants query's top result in namespace agent to contain want.
func (p *proc) search(query, want string) {
	p.t.Helper()
	var sr api.SearchResponse
	p.check("POST", "/v1/search", map[string]any{"namespace": "agent", "query": query}, http.StatusOK, &sr)
	if len(sr.Results) == 0 || !strings.Contains(sr.Results[0].Text, want) {
		p.t.Errorf("search %q: %+v, want a memory with %q first", query, sr.Results, want)
	}
}

// stop sends SIGTERM to the entry point and wants a clean exit.
func (p *proc) stop() {
	p.t.Helper()
	must(p.t, syscall.Kill(p.entry(), syscall.SIGTERM))
	if err := p.wait(30 * time.Second); err != nil {
		p.t.Fatalf("after SIGTERM: %v\n%s", err, p.log())
	}
}

// lockedBuffer is a bytes.Buffer the process's output goroutines and the
// test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
