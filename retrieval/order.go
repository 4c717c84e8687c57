package retrieval

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// sourceOrder keeps each source's memories in time order (ties by ID),
// so that the context stage can find a memory's neighbours: the turns
// before and after it in the same conversation or document. Memories
// without a Source have no neighbours. Safe for concurrent use; writers
// hold the space's lock as for the other indexes.
type sourceOrder struct {
	mu       sync.RWMutex
	bySource map[string][]orderKey // sorted by (time, id)
	of       map[string]orderKey   // id → its key (source set)
}

// orderKey is one memory's place in its source.
type orderKey struct {
	source string
	time   int64 // unix nanoseconds
	id     string
}

func compareKeys(a, b orderKey) int {
	if c := cmp.Compare(a.time, b.time); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

func newSourceOrder() *sourceOrder {
	return &sourceOrder{bySource: map[string][]orderKey{}, of: map[string]orderKey{}}
}

// add places id in source at t, replacing any earlier place of id.
// Memories mostly arrive in time order, so the insertion is usually an
// append.
func (o *sourceOrder) add(id, source string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleteLocked(id)
	if source == "" {
		return
	}
	k := orderKey{source: source, time: t.UnixNano(), id: id}
	list := o.bySource[source]
	i, _ := slices.BinarySearchFunc(list, k, compareKeys)
	o.bySource[source] = slices.Insert(list, i, k)
	o.of[id] = k
}

// delete removes id, if present.
func (o *sourceOrder) delete(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleteLocked(id)
}

func (o *sourceOrder) deleteLocked(id string) {
	k, ok := o.of[id]
	if !ok {
		return
	}
	delete(o.of, id)
	list := o.bySource[k.source]
	if i, found := slices.BinarySearchFunc(list, k, compareKeys); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(o.bySource, k.source)
	} else {
		o.bySource[k.source] = list
	}
}

// neighbour is a memory near another one in its source.
type neighbour struct {
	id       string
	distance int // 1: adjacent
}

// around calls fn for each memory at most window places before or after
// id in id's source, and returns id's source ("" when it has none).
func (o *sourceOrder) around(id string, window int, fn func(neighbour)) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.aroundLocked(id, window, func(n neighbour, _ string) { fn(n) })
}

// aroundLocked is around with o.mu held (read) by the caller; fn also
// gets the source.
func (o *sourceOrder) aroundLocked(id string, window int, fn func(neighbour, string)) string {
	k, ok := o.of[id]
	if !ok {
		return ""
	}
	list := o.bySource[k.source]
	i, found := slices.BinarySearchFunc(list, k, compareKeys)
	if !found {
		return k.source
	}
	for j := max(0, i-window); j <= min(len(list)-1, i+window); j++ {
		if j != i {
			fn(neighbour{id: list[j].id, distance: max(i-j, j-i)}, k.source)
		}
	}
	return k.source
}

// source returns id's source ("" when none or unknown).
func (o *sourceOrder) source(id string) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.of[id].source
}
