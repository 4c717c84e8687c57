//go:build linux

package bolt

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

const diskFullEnv = "RERANKD_STORE_DISKFULL_PATH"

// TestDiskFullChild writes until the file size limit (RLIMIT_FSIZE, the
// closest a test can get to a full disk without mounting one) refuses,
// printing each acknowledged ID and then the error.
func TestDiskFullChild(t *testing.T) {
	path := os.Getenv(diskFullEnv)
	if path == "" {
		t.Skip("child of TestDiskFull only")
	}
	signal.Ignore(syscall.SIGXFSZ) // get EFBIG instead of being killed
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("OPENERR", err)
		os.Exit(0)
	}
	lim := &syscall.Rlimit{Cur: 512 << 10, Max: 512 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, lim); err != nil {
		fmt.Println("RLIMITERR", err)
		os.Exit(0)
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("m%06d", i)
		m := mem("ns", id)
		m.Text = strings.Repeat("filling the disk ", 40) + id
		if err := s.Put(m, vec(i, 64)); err != nil {
			fmt.Println("ERR", err)
			_ = s.Close()
			os.Exit(0)
		}
		fmt.Println(id)
	}
}

// TestDiskFull: when the disk fills, writes fail with an error (no crash),
// and the store stays consistent with every acknowledged memory present.
func TestDiskFull(t *testing.T) {
	if os.Getenv(diskFullEnv) != "" {
		t.Skip("running as child")
	}
	path := filepath.Join(t.TempDir(), "full.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), diskFullEnv+"="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child failed (crash instead of an error?): %v\n%s", err, out)
	}
	var acked []string
	var werr string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ERR "):
			werr = line
		case strings.HasPrefix(line, "OPENERR"), strings.HasPrefix(line, "RLIMITERR"):
			t.Skipf("cannot simulate a full disk here: %s", line)
		case strings.HasPrefix(line, "m"):
			acked = append(acked, line)
		}
	}
	if werr == "" || len(acked) == 0 {
		t.Fatalf("want some acknowledged writes then an error; got %d acks, %q", len(acked), werr)
	}
	t.Logf("%d writes acknowledged, then: %s", len(acked), werr)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after disk full: %v", err)
	}
	defer s.Close()
	for _, id := range acked {
		if _, err := s.Get("ns", id); err != nil {
			t.Fatalf("acknowledged %s lost: %v", id, err)
		}
	}
	st, err := s.Check(func(p store.Problem) { t.Errorf("after disk full: %v", p) })
	if err != nil || st.Problems != 0 {
		t.Fatalf("check: %+v %v", st, err)
	}
	// With space again, writing works.
	if err := s.Put(mem("ns", "after"), nil); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}
}
