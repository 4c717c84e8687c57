package tokenizer

import (
	"strings"
	"sync"
)

// defaultCacheEntries bounds the word cache. Dialog text repeats a small
// working set of words, so 10,000 entries (the reference's capacity) hold
// nearly all hits at a few MB.
const defaultCacheEntries = 10_000

// maxCachedWord: longer words are rare and would pin memory; they are merged
// each time.
const maxCachedWord = 256

// wordCache maps a pre-tokenized word to its BPE pieces. When full it is
// emptied rather than frozen, so a long-running server follows a drifting
// vocabulary; memory stays bounded by entries * maxCachedWord.
type wordCache struct {
	mu      sync.RWMutex
	m       map[string][]piece
	entries int
}

func newWordCache(entries int) *wordCache {
	return &wordCache{m: make(map[string][]piece, entries), entries: entries}
}

func (c *wordCache) get(word string) ([]piece, bool) {
	c.mu.RLock()
	p, ok := c.m[word]
	c.mu.RUnlock()
	return p, ok
}

func (c *wordCache) put(word string, p []piece) {
	if len(word) > maxCachedWord || c.entries <= 0 {
		return
	}
	c.mu.Lock()
	if len(c.m) >= c.entries {
		clear(c.m)
	}
	// Clone: word is a slice of the caller's text, which must not be pinned.
	c.m[strings.Clone(word)] = p
	c.mu.Unlock()
}

func (c *wordCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
