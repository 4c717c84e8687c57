package model

import (
	"slices"
	"testing"
)

func entry(tokens ...int) *kvEntry { return &kvEntry{tokens: tokens} }

func TestKVCacheLookup(t *testing.T) {
	c := newKVCache(1<<20, 1)
	c.add(entry(1, 2, 3, 4, 5))
	c.add(entry(1, 2, 9, 9))
	c.add(entry(7, 8))
	for _, tc := range []struct {
		name   string
		prefix []int
		limit  int
		tokens []int // the entry found starts with these; nil: none
		n      int
	}{
		{"longest start wins", []int{1, 2, 3, 4, 6}, 10, []int{1, 2, 3, 4, 5}, 4},
		{"other branch", []int{1, 2, 9, 1}, 10, []int{1, 2, 9, 9}, 3},
		{"whole entry inside a longer prefix", []int{7, 8, 9, 10}, 10, []int{7, 8}, 2},
		{"limited: any entry sharing the limit will do", []int{1, 2, 3, 4, 5}, 2, []int{1, 2}, 2},
		{"limit zero", []int{1, 2, 3}, 0, nil, 0},
		{"no shared token", []int{5, 1, 2}, 10, nil, 0},
		{"empty prefix", nil, 10, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, n := c.lookup(tc.prefix, tc.limit)
			if n != tc.n || (e == nil) != (tc.tokens == nil) || (e != nil && !slices.Equal(e.tokens[:min(len(tc.tokens), len(e.tokens))], tc.tokens)) {
				t.Errorf("lookup(%v, %d) = %v, %d; want %v, %d", tc.prefix, tc.limit, e, n, tc.tokens, tc.n)
			}
		})
	}
}

// TestKVCacheBound: the cache never holds more than its bound, drops the
// least recently used first, drops entries a newer one extends, and does
// not store an entry larger than the bound.
func TestKVCacheBound(t *testing.T) {
	c := newKVCache(10, 1) // 10 tokens
	c.add(entry(1, 1, 1, 1))
	c.add(entry(2, 2, 2, 2))
	if _, n := c.lookup([]int{1, 1, 1, 1}, 4); n != 4 { // 1s become most recent
		t.Fatalf("lookup 1s: %d", n)
	}
	c.add(entry(3, 3, 3, 3)) // 12 > 10: the 2s go
	if _, n := c.lookup([]int{2, 2}, 2); n != 0 {
		t.Error("least recently used entry kept")
	}
	if _, n := c.lookup([]int{1, 1}, 2); n != 2 {
		t.Error("recently used entry dropped")
	}
	c.add(entry(3, 3, 3, 3, 5)) // extends the 3s: replaces them
	st := c.snapshot()
	if st.Entries != 2 || st.Bytes != 9 || st.Bytes > st.MaxBytes {
		t.Errorf("after extension: %+v, want 2 entries of 9 tokens", st)
	}
	c.add(entry(make([]int, 11)...)) // larger than the bound
	if st := c.snapshot(); st.Entries != 2 || st.Bytes != 9 {
		t.Errorf("oversized entry changed the cache: %+v", st)
	}
	c.record(3, 2)
	c.record(0, 5)
	if st := c.snapshot(); st.Lookups != 2 || st.Hits != 1 || st.ReusedTokens != 3 || st.ComputedTokens != 7 {
		t.Errorf("counters %+v", st)
	}
}

func TestSliceKV(t *testing.T) {
	// [outer 2, full 3, inner 2]
	x := []float32{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}
	for _, tc := range []struct {
		n    int
		want []float32
	}{
		{3, x},
		{2, []float32{0, 1, 2, 3, 10, 11, 12, 13}},
		{1, []float32{0, 1, 10, 11}},
		{0, []float32{}},
	} {
		if got := sliceKV(x, 2, 3, tc.n, 2); !slices.Equal(got, tc.want) {
			t.Errorf("n=%d: %v, want %v", tc.n, got, tc.want)
		}
	}
}
