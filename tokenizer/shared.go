package tokenizer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// maxShared bounds how many distinct tokenizers Shared keeps (a Qwen one
// holds ~30 MB). A server uses one or two; the oldest is dropped beyond it.
const maxShared = 8

// Shared returns the tokenizer at path (a tokenizer.json or a folder holding
// one, as for Load), loading each distinct file once per process. Model
// folders carry their own copy of tokenizer.json, so the cache is keyed
// twice: by the files' path, size and modification time (a hit costs two
// stats), and by their content (a copy elsewhere costs a read and a hash,
// not a parse). A file changed on disk is a new key and is loaded again.
//
// The returned tokenizer is shared: it is immutable apart from its
// concurrency-safe word cache, so callers need no copy.
func Shared(path string) (*Tokenizer, error) {
	file := tokenizerFile(path)
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	cfgFile := filepath.Join(filepath.Dir(file), ConfigFileName)
	sk, err := statKeyOf(file, cfgFile)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if e := shared.byStat(sk); e != nil {
		return e.wait()
	}
	data, cfg, err := readFiles(file)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0}) // keeps (json, config) pairs apart from their concatenation
	h.Write(cfg)
	var ck contentKey
	h.Sum(ck[:0])
	e, load := shared.byContent(sk, ck)
	if load {
		sharedParses.Add(1)
		e.tok, e.err = FromBytes(data, cfg)
		if e.err != nil {
			e.err = fmt.Errorf("tokenizer %s: %w", file, e.err)
			shared.forget(ck) // a failure is not cached: the file may be fixed
		}
		close(e.done)
	}
	return e.wait()
}

type statKey struct {
	file            string
	size, cfgSize   int64
	mtime, cfgMtime time.Time
	cfgMissing      bool
}

type contentKey [sha256.Size]byte

func statKeyOf(file, cfgFile string) (statKey, error) {
	st, err := os.Stat(file)
	if err != nil {
		return statKey{}, err
	}
	k := statKey{file: file, size: st.Size(), mtime: st.ModTime()}
	cst, err := os.Stat(cfgFile)
	switch {
	case err == nil:
		k.cfgSize, k.cfgMtime = cst.Size(), cst.ModTime()
	case errors.Is(err, os.ErrNotExist):
		k.cfgMissing = true
	default:
		return statKey{}, err
	}
	return k, nil
}

type sharedEntry struct {
	done chan struct{} // closed once tok/err are set
	tok  *Tokenizer
	err  error
	used uint64 // recency, for eviction
}

func (e *sharedEntry) wait() (*Tokenizer, error) {
	<-e.done
	return e.tok, e.err
}

type sharedCache struct {
	mu      sync.Mutex
	clock   uint64
	content map[contentKey]*sharedEntry
	stat    map[statKey]contentKey
}

// sharedParses counts the parses Shared made, for tests.
var sharedParses atomic.Int64

var shared = sharedCache{content: map[contentKey]*sharedEntry{}, stat: map[statKey]contentKey{}}

func (c *sharedCache) byStat(sk statKey) *sharedEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	ck, ok := c.stat[sk]
	if !ok {
		return nil
	}
	e := c.content[ck]
	if e != nil {
		c.clock++
		e.used = c.clock
	}
	return e
}

// byContent returns the entry for ck, creating it when absent (load is
// then true: the caller fills it and closes done). sk is remembered as
// another name of ck.
func (c *sharedCache) byContent(sk statKey, ck contentKey) (e *sharedEntry, load bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	c.stat[sk] = ck
	if e := c.content[ck]; e != nil {
		e.used = c.clock
		return e, false
	}
	if len(c.content) >= maxShared {
		c.evictOldest()
	}
	e = &sharedEntry{done: make(chan struct{}), used: c.clock}
	c.content[ck] = e
	return e, true
}

func (c *sharedCache) evictOldest() {
	var oldest contentKey
	first := true
	for k, e := range c.content {
		if first || e.used < c.content[oldest].used {
			oldest, first = k, false
		}
	}
	c.dropLocked(oldest)
}

func (c *sharedCache) forget(ck contentKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(ck)
}

func (c *sharedCache) dropLocked(ck contentKey) {
	delete(c.content, ck)
	for sk, k := range c.stat {
		if k == ck {
			delete(c.stat, sk)
		}
	}
}
