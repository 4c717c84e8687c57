package pagecache

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func writeFile(t *testing.T, path string, size int) {
	t.Helper()
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b"), 10)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "a"), 10)
	writeFile(t, filepath.Join(dir, "a"), 10)
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"folder, recursive and sorted", []string{dir}, []string{"a", "b", "sub/a"}},
		{"one file", []string{filepath.Join(dir, "b")}, []string{"b"}},
		{"repeats counted once", []string{dir, filepath.Join(dir, "a")}, []string{"a", "b", "sub/a"}},
		{"nothing", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Files(tt.paths...)
			if err != nil {
				t.Fatal(err)
			}
			var rel []string
			for _, g := range got {
				r, _ := filepath.Rel(dir, g)
				rel = append(rel, filepath.ToSlash(r))
			}
			if !slices.Equal(rel, tt.want) {
				t.Errorf("Files = %v, want %v", rel, tt.want)
			}
		})
	}
	if _, err := Files(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: err %v, want ErrNotExist", err)
	}
}

func TestUsageFraction(t *testing.T) {
	for _, tt := range []struct {
		u    Usage
		want float64
	}{
		{Usage{}, 0},
		{Usage{Bytes: 100, ResidentBytes: 25}, 0.25},
		{Usage{Bytes: 100, ResidentBytes: 100}, 1},
	} {
		if got := tt.u.Fraction(); got != tt.want {
			t.Errorf("%+v.Fraction() = %v, want %v", tt.u, got, tt.want)
		}
	}
}

// TestEvictResidentPrefetch drops a file just written, checks that little
// of it is left, reads it back in with Prefetch and checks it is resident
// again. The file is not a multiple of the page size, so counting must
// clip the last page.
func TestEvictResidentPrefetch(t *testing.T) {
	if !Supported {
		if _, err := Evict(t.TempDir()); !errors.Is(err, ErrUnsupported) && err != nil {
			t.Fatalf("Evict on an unsupported system: %v, want ErrUnsupported", err)
		}
		t.Skip("no page cache control on this system")
	}
	dir := t.TempDir()
	const size = 8<<20 + 123
	path := filepath.Join(dir, "data")
	writeFile(t, path, size)
	u, err := Resident(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Files != 1 || u.Bytes != size || u.ResidentBytes > size {
		t.Fatalf("Resident after writing = %+v, want 1 file of %d bytes, at most all resident", u, size)
	}
	if u.ResidentBytes == 0 {
		t.Skip("a file just written is not in the page cache here (no page cache for this file system?)")
	}
	after, err := Evict(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after.ResidentBytes >= u.ResidentBytes {
		t.Skipf("this file system keeps files in memory (tmpfs?): %d bytes resident before evicting, %d after", u.ResidentBytes, after.ResidentBytes)
	}
	if after.Fraction() > 0.1 {
		t.Errorf("after Evict %.0f%% still resident, want <= 10%%", 100*after.Fraction())
	}
	if err := Prefetch(path, Range{Off: 0, Len: 1 << 20}, Range{Off: size - 100, Len: 1 << 30}, Range{Off: size + 1, Len: 5}); err != nil {
		t.Fatal(err)
	}
	// Reads were started, not awaited: poll for them.
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, err = Resident(path)
		if err != nil {
			t.Fatal(err)
		}
		if u.ResidentBytes >= 1<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if u.ResidentBytes < 1<<20 {
		t.Errorf("after prefetching the first MiB, %d bytes resident", u.ResidentBytes)
	}
	if err := Prefetch(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if u, err = Resident(path); err != nil || u.ResidentBytes != size {
		t.Errorf("after reading the whole file: %+v, %v; want all %d bytes resident", u, err, size)
	}
}

func TestErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Evict(missing); err == nil {
		t.Error("Evict of a missing file: no error")
	}
	if _, err := Resident(missing); err == nil {
		t.Error("Resident of a missing file: no error")
	}
	if Supported {
		if err := Prefetch(missing); err == nil {
			t.Error("Prefetch of a missing file: no error")
		}
	}
}
