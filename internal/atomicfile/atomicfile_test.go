package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "two" {
		t.Fatalf("read %q, %v", data, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	assertOnly(t, dir, "f.json")
}

// TestWriteFailureKeepsOld: a failing writer leaves the old file whole and
// no temporary file behind.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, "", func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Fatalf("old file is now %q", data)
	}
	assertOnly(t, dir, "f")
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing folder: %v", err)
	}
}

// TestWritePattern: the temporary file's name follows the pattern, so a
// caller can find and remove its leftovers after a crash.
func TestWritePattern(t *testing.T) {
	dir := t.TempDir()
	var seen string
	err := Write(filepath.Join(dir, "x.snap"), 0o600, ".tmp-*.snap", func(io.Writer) error {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			seen = e.Name()
		}
		return nil
	})
	if err != nil || !strings.HasPrefix(seen, ".tmp-") || !strings.HasSuffix(seen, ".snap") {
		t.Fatalf("temporary file %q, %v", seen, err)
	}
}

func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("folder holds %v, want only %s", names, name)
	}
}

// TestWriteAll: files written together; a failed write changes none of
// them, a failed rename keeps the earlier files new and the rest old, and
// no temporary file is left either way.
func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.data"), filepath.Join(dir, "b.onnx")
	content := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteAll(File{Path: a, Perm: 0o644, Write: content("a1")}, File{Path: b, Perm: 0o600, Write: content("b1")}); err != nil {
		t.Fatal(err)
	}
	check := func(wantA, wantB string) {
		t.Helper()
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if string(da) != wantA || string(db) != wantB {
			t.Errorf("a %q b %q, want %q %q", da, db, wantA, wantB)
		}
	}
	check("a1", "b1")
	if st, _ := os.Stat(b); st.Mode().Perm() != 0o600 {
		t.Errorf("b mode %v, want 0600", st.Mode().Perm())
	}
	boom := errors.New("boom")
	err := WriteAll(File{Path: a, Perm: 0o644, Write: content("a2")}, File{Path: b, Perm: 0o644, Write: func(io.Writer) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	check("a1", "b1")
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("folder holds %d entries after a failed write, want 2", len(ents))
	}
	// A rename that fails (a non-empty folder is in the way) after the
	// first succeeded.
	c := filepath.Join(dir, "c")
	if err := os.MkdirAll(filepath.Join(c, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(File{Path: a, Perm: 0o644, Write: content("a3")}, File{Path: c, Perm: 0o644, Write: content("c")}); err == nil {
		t.Fatal("renamed a file over a non-empty folder")
	}
	check("a3", "b1")
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("folder holds %d entries after a failed rename, want 3 (a, b, c)", len(ents))
	}
}

// TestRename: a file, and a folder with its files, moved into place; a
// missing source is an error that changes nothing.
func TestRename(t *testing.T) {
	dir := t.TempDir()
	tmp, dst := filepath.Join(dir, "f.incomplete"), filepath.Join(dir, "f")
	if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(dst); string(data) != "new" {
		t.Fatalf("f is %q", data)
	}
	assertOnly(t, dir, "f")
	if err := Rename(tmp, dst); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing source: %v", err)
	}
	if data, _ := os.ReadFile(dst); string(data) != "new" {
		t.Fatalf("f is %q after a failed rename", data)
	}

	entry := filepath.Join(dir, ".entry.tmp")
	if err := os.MkdirAll(filepath.Join(entry, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"model.onnx", "sub/data"} {
		if err := os.WriteFile(filepath.Join(entry, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Rename(entry, filepath.Join(dir, "entry")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "entry", "sub", "data")); string(data) != "sub/data" {
		t.Fatalf("entry/sub/data is %q", data)
	}
}

// TestOneAtomicWrite: outside this package, no Go file renames a file into
// place by hand (os.Rename): a hand-rolled atomic write forgets an fsync
// sooner or later. There are no exceptions: a file filled by other means
// (a resumable download, a folder ONNX Runtime writes) goes through Rename.
func TestOneAtomicWrite(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rename := regexp.MustCompile(`\bos\.Rename\(`)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "shared") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/atomicfile/") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rename.Match(data) {
			t.Errorf("%s renames a file by hand: use atomicfile (Write, WriteAll, Rename)", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
