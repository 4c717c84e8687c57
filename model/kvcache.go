package model

import (
	"container/list"
	"sync"

	"github.com/rerankd/rerankd/rerank"
)

// kvCache keeps the keys and values of recent shared prefixes across
// requests, so the next request with the same system prompt and
// instruction (or the same query again) starts from them instead of
// recomputing. Bounded by bytes, least recently used out first.
//
// An entry is the K/V of a token sequence; because attention is causal,
// the K/V of its first n tokens are those of any sequence starting with the
// same n tokens, so one entry serves every prefix that shares a start with
// it (lookup returns the longest such start). Entries are immutable once
// added: readers use them without the lock, and eviction only drops the
// cache's reference.
type kvCache struct {
	maxBytes int64
	perToken int64 // bytes of K and V per token

	mu    sync.Mutex
	bytes int64
	lru   *list.List // of *kvEntry, most recent first
	stats rerank.PrefixCacheStats
}

// kvEntry is the K/V of tokens, each [layers, heads, len(tokens), head_dim].
type kvEntry struct {
	tokens []int
	k, v   []float32
}

func newKVCache(maxBytes, perToken int64) *kvCache {
	return &kvCache{maxBytes: maxBytes, perToken: perToken, lru: list.New()}
}

// lookup returns the entry sharing the longest start with prefix and that
// length, at most limit; nil, 0 when none shares a token.
func (c *kvCache) lookup(prefix []int, limit int) (*kvEntry, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *list.Element
	n := 0
	for e := c.lru.Front(); e != nil; e = e.Next() {
		if m := commonPrefix(e.Value.(*kvEntry).tokens, prefix, limit); m > n {
			best, n = e, m
		}
	}
	if best == nil {
		return nil, 0
	}
	c.lru.MoveToFront(best)
	return best.Value.(*kvEntry), n
}

// record counts one cache-consulting call that reused reused tokens and
// computed computed.
func (c *kvCache) record(reused, computed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Lookups++
	if reused > 0 {
		c.stats.Hits++
	}
	c.stats.ReusedTokens += int64(reused)
	c.stats.ComputedTokens += int64(computed)
}

// add stores e, dropping entries it makes redundant (their tokens are a
// start of e's) and then the least recently used until the bound holds. An
// entry larger than the whole bound is not stored.
func (c *kvCache) add(e *kvEntry) {
	size := c.perToken * int64(len(e.tokens))
	if size > c.maxBytes || len(e.tokens) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		old := el.Value.(*kvEntry)
		if commonPrefix(old.tokens, e.tokens, len(old.tokens)) == len(old.tokens) {
			c.remove(el)
		}
		el = next
	}
	c.lru.PushFront(e)
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

func (c *kvCache) remove(el *list.Element) {
	c.bytes -= c.perToken * int64(len(el.Value.(*kvEntry).tokens))
	c.lru.Remove(el)
}

// snapshot returns the counters and the current size.
func (c *kvCache) snapshot() rerank.PrefixCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes, s.MaxBytes = c.lru.Len(), c.bytes, c.maxBytes
	return s
}

// commonPrefix is the length of the common start of a and b, at most limit.
func commonPrefix(a, b []int, limit int) int {
	n := min(len(a), len(b), limit)
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return max(n, 0)
}

// sliceKV copies the first n of the seq axis of x [outer, full, inner]
// (outer = layers*heads, inner = head_dim) into [outer, n, inner].
func sliceKV(x []float32, outer, full, n, inner int) []float32 {
	if n == full {
		return x
	}
	out := make([]float32, 0, outer*n*inner)
	for o := range outer {
		base := o * full * inner
		out = append(out, x[base:base+n*inner]...)
	}
	return out
}
