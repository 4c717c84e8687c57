package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// runOnTerminal runs the CLI with stderr on a pseudo-terminal and returns
// what the terminal received.
func runOnTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var code int
	term := testenv.OnTerminal(t, func(tty *os.File) {
		var out bytes.Buffer
		code = run(args, strings.NewReader(""), &out, tty)
	})
	return code, term
}

// TestStoreProgressOnTerminal: store check and store salvage draw a bar with
// the record count on a terminal, and nothing of it on a pipe or buffer.
func TestStoreProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	s, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var batch []store.Item
	for i := range 3000 {
		batch = append(batch, store.Item{Memory: memory.Memory{Namespace: "ns", ID: fmt.Sprint("id", i), Text: "some memory text"}})
	}
	if err := s.PutBatch(batch); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	for _, tc := range []struct {
		label string
		args  []string
	}{
		{"store check", []string{"store", "check", "--store", path}},
		{"store salvage", []string{"store", "salvage", "--store", path, "--out", filepath.Join(dir, "a.db")}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			code, term := runOnTerminal(t, tc.args...)
			if code != 0 || !strings.Contains(term, tc.label) || !strings.Contains(term, "3000/3000") {
				t.Errorf("exit %d, terminal got %q: want the bar with its label and count", code, term)
			}
		})
	}
	code, _, errs := runCLI(t, "store", "salvage", "--store", path, "--out", filepath.Join(dir, "b.db"))
	if code != 0 || strings.Contains(errs, "\r") || strings.Contains(errs, "store salvage") {
		t.Errorf("salvage to a buffer: exit %d, stderr %q", code, errs)
	}
}
