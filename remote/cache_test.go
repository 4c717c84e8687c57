package remote

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func appendTorn(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("0123abcd torn"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}

func TestCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "c")
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := NewKey("a", "bc"), NewKey("ab", "c")
	if k1 == k2 {
		t.Fatal("length prefixes do not separate parts")
	}
	if err := c.Put([]Key{k1, k2}, [][]byte{{1, 2, 3}, {}}); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	appendTorn(t, path)
	c, err = OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Get(k1); !ok || !bytes.Equal(v, []byte{1, 2, 3}) {
		t.Errorf("k1: %v %v", v, ok)
	}
	if v, ok := c.Get(k2); !ok || len(v) != 0 {
		t.Errorf("k2: %v %v", v, ok)
	}
	if hits, misses := c.Stats(); hits != 2 || misses != 0 {
		t.Errorf("stats %d %d", hits, misses)
	}
	_ = c.Close()
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "torn") {
		t.Error("torn line kept")
	}
	if err := os.WriteFile(path, []byte("not a cache\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCache(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a foreign file: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now, _ := httpTime("Mon, 07 Dec 2026 03:00:00 GMT")
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", "0s"}, {"2", "2s"}, {"0.5", "500ms"}, {"-1", "0s"}, {"soon", "0s"},
		{"Mon, 07 Dec 2026 03:00:03 GMT", "3s"}, {"Mon, 07 Dec 2026 02:59:00 GMT", "0s"},
		{"1e10", "10m0s"}, {"Inf", "10m0s"}, {"Tue, 07 Dec 2027 03:00:00 GMT", "10m0s"},
	} {
		if got := parseRetryAfter(tc.in, now).String(); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}

func httpTime(s string) (time.Time, error) { return http.ParseTime(s) }
