package index

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Order keeps each source's memories in time order (ties by ID),
// so that the context stage can find a memory's neighbours: the turns
// before and after it in the same conversation or document. Memories
// without a Source have no neighbours. Safe for concurrent use; writers
// hold the namespace's write lock, as for the other indexes.
type Order struct {
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

// NewOrder returns an empty Order.
func NewOrder() *Order {
	return &Order{bySource: map[string][]orderKey{}, of: map[string]orderKey{}}
}

// Add places id in source at t, replacing any earlier place of id.
// Memories mostly arrive in time order, so the insertion is usually an
// append.
func (o *Order) Add(id, source string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.remove(id)
	if source == "" {
		return
	}
	k := orderKey{source: source, time: t.UnixNano(), id: id}
	list := o.bySource[source]
	i, _ := slices.BinarySearchFunc(list, k, compareKeys)
	o.bySource[source] = slices.Insert(list, i, k)
	o.of[id] = k
}

// Delete removes id, if present.
func (o *Order) Delete(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.remove(id)
}

func (o *Order) remove(id string) {
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

// Neighbour is a memory near another one in its source.
type Neighbour struct {
	ID       string
	Distance int // 1: adjacent
}

// Around calls fn for each memory at most window places before or after
// id in id's source, and returns id's source ("" when it has none).
func (o *Order) Around(id string, window int, fn func(Neighbour)) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.around(id, window, func(n Neighbour, _ string) { fn(n) })
}

// Read calls fn with o read-locked, so that a stage making many lookups
// sees one state of o.
func (o *Order) Read(fn func(Reader)) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	fn(Reader{o})
}

// Reader looks up an Order that Read holds read-locked.
type Reader struct{ o *Order }

// Around is Order.Around, with fn also given id's source.
func (r Reader) Around(id string, window int, fn func(Neighbour, string)) string {
	return r.o.around(id, window, fn)
}

// around is Around with o.mu held (read) by the caller.
func (o *Order) around(id string, window int, fn func(Neighbour, string)) string {
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
			fn(Neighbour{ID: list[j].id, Distance: max(i-j, j-i)}, k.source)
		}
	}
	return k.source
}

// Source returns id's source ("" when none or unknown).
func (o *Order) Source(id string) string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.of[id].source
}
