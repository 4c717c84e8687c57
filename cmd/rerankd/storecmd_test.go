package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

func TestStoreCheckAndSalvage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		m := memory.Memory{Namespace: "ns", ID: fmt.Sprint("id", i), Text: fmt.Sprintf("memory number %d here", i)}
		if err := s.Put(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()

	code, out, errs := runCLI(t, "store", "check", "--store", path)
	if code != 0 || !strings.Contains(out, "10 memories") || !strings.Contains(out, "0 problems") {
		t.Fatalf("clean check: %d %q %q", code, out, errs)
	}
	if strings.Contains(errs, "store check") || strings.Contains(errs, "\r") {
		t.Errorf("progress bar written to a stderr that is not a terminal: %q", errs)
	}
	raw, _ := os.ReadFile(path)
	// Every copy: freed pages still hold stale copies of the record.
	for off := 0; ; {
		i := bytes.Index(raw[off:], []byte("memory number 3 here"))
		if i < 0 {
			break
		}
		raw[off+i] ^= 0x20
		off += i + 1
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "store", "check", "--store", path, "--json")
	var rep struct {
		Check    store.CheckStats
		Problems []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if code != 1 || rep.Check.Problems != 1 || !strings.Contains(rep.Problems[0], "ns/id3") || !strings.Contains(errs, "store salvage") {
		t.Fatalf("damaged check: %d %s %q", code, out, errs)
	}
	newPath := filepath.Join(dir, "new.db")
	code, out, errs = runCLI(t, "store", "salvage", "--store", path, "--out", newPath)
	if code != 0 || !strings.Contains(out, "salvaged 9 memories") || !strings.Contains(out, "ns/id3") {
		t.Fatalf("salvage: %d %q %q", code, out, errs)
	}
	if code, out, _ = runCLI(t, "store", "check", "--store", newPath); code != 0 || !strings.Contains(out, "9 memories") {
		t.Fatalf("check of salvaged store: %d %q", code, out)
	}
	for _, bad := range [][]string{
		{"store"},
		{"store", "fix"},
		{"store", "salvage", "--store", path},
		{"store", "salvage", "--store", path, "--out", newPath},
		{"store", "check", "--store", filepath.Join(dir, "missing", "x.db")},
	} {
		if code, _, errs := runCLI(t, bad...); code == 0 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
}
