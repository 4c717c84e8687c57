package remote

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Key identifies one cached value: a SHA-256 of its parts.
type Key [sha256.Size]byte

// NewKey hashes parts, each length-prefixed so that no two different
// lists of parts share a key.
func NewKey(parts ...string) Key {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// Cache is an append-only file of key → value lines ("hexkey base64\n"),
// read whole into memory when opened. Every Put appends at once, so a run
// killed at any point keeps all it had finished; a torn last line is cut
// off when the file is next opened. Safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	f    *os.File
	m    map[Key][]byte
	path string

	hits, misses atomic.Int64
}

// OpenCache opens (creating it and its folder) the cache file at path.
func OpenCache(path string) (*Cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("score cache: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("score cache: %w", err)
	}
	c := &Cache{f: f, m: map[Key][]byte{}, path: path}
	good, err := c.load()
	if err == nil {
		// Cut a torn last line, then append after the good ones.
		err = f.Truncate(good)
	}
	if err == nil {
		_, err = f.Seek(good, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("score cache %s: %w", path, err)
	}
	return c, nil
}

// load reads every complete line and returns the offset after the last
// one. A complete line that does not parse is an error (the file is not
// a cache): only an unterminated last line is a torn write.
func (c *Cache) load() (int64, error) {
	r := bufio.NewReaderSize(c.f, 1<<20)
	var off int64
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return off, nil // b, if any, is a torn last line
		}
		if err != nil {
			return off, err
		}
		hexKey, val, ok := bytes.Cut(bytes.TrimSuffix(b, []byte("\n")), []byte(" "))
		var k Key
		if !ok || hex.DecodedLen(len(hexKey)) != len(k) {
			return off, fmt.Errorf("line %d: not a cache line", line)
		}
		if _, err := hex.Decode(k[:], hexKey); err != nil {
			return off, fmt.Errorf("line %d: %w", line, err)
		}
		v, err := base64.StdEncoding.DecodeString(string(val))
		if err != nil {
			return off, fmt.Errorf("line %d: %w", line, err)
		}
		c.m[k] = v
		off += int64(len(b))
	}
}

// Get returns the value under k.
func (c *Cache) Get(k Key) ([]byte, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return v, ok
}

// Put stores values under keys (parallel slices) in one append.
func (c *Cache) Put(keys []Key, vals [][]byte) error {
	var b bytes.Buffer
	for i, k := range keys {
		b.WriteString(hex.EncodeToString(k[:]))
		b.WriteByte(' ')
		b.WriteString(base64.StdEncoding.EncodeToString(vals[i]))
		b.WriteByte('\n')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("score cache %s: %w", c.path, err)
	}
	for i, k := range keys {
		c.m[k] = vals[i]
	}
	return nil
}

// Stats returns the lookups that found a value and those that did not.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// Len returns the number of values held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Close closes the file.
func (c *Cache) Close() error { return c.f.Close() }
