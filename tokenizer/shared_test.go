package tokenizer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func writeTok(t *testing.T, dir string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestShared: one parse per distinct content, whether the file is named
// again, copied elsewhere or asked for concurrently; a changed file is read
// again; a failure is not remembered.
func TestShared(t *testing.T) {
	root := t.TempDir()
	a := writeTok(t, filepath.Join(root, "a"), tinyJSON(t, [][2]string{{"a", "b"}}, nil))
	parses := func() int64 { return sharedParses.Load() }
	start := parses()

	first, err := Shared(a)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Shared(filepath.Join(a, FileName)); again != first {
		t.Error("the same file named as a file, not a folder, was loaded again")
	}
	copyDir := writeTok(t, filepath.Join(root, "copy"), tinyJSON(t, [][2]string{{"a", "b"}}, nil))
	if c, _ := Shared(copyDir); c != first {
		t.Error("a byte-identical copy was loaded again")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if c, err := Shared(a); err != nil || c != first {
				t.Errorf("concurrent Shared: %v, same=%v", err, c == first)
			}
		})
	}
	wg.Wait()
	if n := parses() - start; n != 1 {
		t.Errorf("%d parses, want 1", n)
	}

	// A config beside the file is part of the content.
	if err := os.WriteFile(filepath.Join(copyDir, ConfigFileName), []byte(`{"pad_token": "<think>"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	withCfg, err := Shared(copyDir)
	if err != nil || withCfg == first || !withCfg.Pad().Set {
		t.Errorf("config added: err %v, same tokenizer %v, pad %+v", err, withCfg == first, withCfg.Pad())
	}

	// Rewritten in place (a new merge): a new tokenizer with the new table.
	changed := tinyJSON(t, [][2]string{{"a", "b"}, {"ab", "c"}}, nil)
	writeTok(t, a, changed)
	future := time.Now().Add(time.Hour) // mtime granularity must not hide the change
	if err := os.Chtimes(filepath.Join(a, FileName), future, future); err != nil {
		t.Fatal(err)
	}
	now, err := Shared(a)
	if err != nil || now == first || len(now.EncodeIDs("abc")) != 1 {
		t.Fatalf("rewritten file: err %v, same %v", err, now == first)
	}

	// A broken file is an error each time, and is read again once fixed.
	bad := writeTok(t, filepath.Join(root, "bad"), []byte(`{"model":`))
	if _, err := Shared(bad); err == nil {
		t.Fatal("broken file loaded")
	}
	writeTok(t, bad, tinyJSON(t, [][2]string{{"x", "y"}}, nil))
	if err := os.Chtimes(filepath.Join(bad, FileName), future, future); err != nil {
		t.Fatal(err)
	}
	if _, err := Shared(bad); err != nil {
		t.Fatalf("fixed file: %v", err)
	}
	if _, err := Shared(filepath.Join(root, "missing")); err == nil {
		t.Error("missing folder loaded")
	}
}

// TestSharedBounded: at most maxShared tokenizers are kept; the least
// recently used goes first.
func TestSharedBounded(t *testing.T) {
	root := t.TempDir()
	letters := "bcdefghijklmnop"
	var dirs []string
	for i := range maxShared + 2 {
		m := [][2]string{{"a", letters[i : i+1]}}
		dirs = append(dirs, writeTok(t, filepath.Join(root, letters[i:i+1]), tinyJSON(t, m, nil)))
	}
	keep, err := Shared(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		if _, err := Shared(d); err != nil {
			t.Fatal(err)
		}
		if _, err := Shared(dirs[0]); err != nil { // keeps dirs[0] the most recent
			t.Fatal(err)
		}
	}
	shared.mu.Lock()
	n := len(shared.content)
	shared.mu.Unlock()
	if n > maxShared {
		t.Errorf("%d tokenizers kept, want <= %d", n, maxShared)
	}
	before := sharedParses.Load()
	if again, _ := Shared(dirs[0]); again != keep || sharedParses.Load() != before {
		t.Error("the most recently used tokenizer was evicted")
	}
	if _, err := Shared(dirs[1]); err != nil || sharedParses.Load() != before+1 {
		t.Errorf("the least recently used was kept (err %v)", err)
	}
}
