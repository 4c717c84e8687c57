package remote

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzOpenCache: any file either opens as a cache or is refused with an
// error; one that opens keeps the same values when opened again, and
// accepts a new value after them.
func FuzzOpenCache(f *testing.F) {
	k := NewKey("a")
	f.Add([]byte{})
	f.Add([]byte("not a cache\n"))
	f.Add([]byte(hexKey(k) + " AQID\n" + hexKey(k) + " tor"))
	f.Add([]byte(hexKey(k) + " !!!\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "c")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := OpenCache(path)
		if err != nil {
			return
		}
		n := c.Len()
		nk := NewKey("fuzz", string(data))
		if err := c.Put([]Key{nk}, [][]byte{{7}}); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		c, err = OpenCache(path)
		if err != nil {
			t.Fatalf("reopening after a put: %v", err)
		}
		defer c.Close()
		if v, ok := c.Get(nk); !ok || len(v) != 1 || v[0] != 7 {
			t.Fatalf("put value lost: %v %v", v, ok)
		}
		if c.Len() != n+1 && c.Len() != n { // n+1, or n when the key was there
			t.Fatalf("%d values, had %d", c.Len(), n)
		}
	})
}

func hexKey(k Key) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(k))
	for i, x := range k {
		b[2*i], b[2*i+1] = digits[x>>4], digits[x&15]
	}
	return string(b)
}

// FuzzParseRetryAfter: no header value panics or gives a negative wait.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "2", "0.5", "-1", "NaN", "1e400", "Mon, 07 Dec 2026 03:00:03 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 {
			t.Fatalf("%q: %v", v, d)
		}
	})
}
