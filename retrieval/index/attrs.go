package index

import (
	"sync"

	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// attrs holds what filters read of each memory (its time, source and
// metadata), which memories hold each source and metadata value, and the
// times and numbers in sorted order (ranges), so that a filter's
// allow-list is built from the memories holding its equality's values or
// lying in its range rather than from every memory.
type attrs struct {
	mu sync.RWMutex
	m  map[string]*filter.Fields
	eq map[eqKey]map[string]struct{}
	rg ranges
}

// eqKey is one source (Source set, Key "") or one metadata key's value.
type eqKey struct {
	Source bool
	Key    string
	Val    memory.Value
}

func newAttrs() *attrs {
	return &attrs{m: map[string]*filter.Fields{}, eq: map[eqKey]map[string]struct{}{}, rg: newRanges()}
}

func (a *attrs) put(m memory.Memory) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeLocked(m.ID)
	f := filter.Of(m)
	a.m[m.ID] = &f
	a.each(&f, func(k eqKey) {
		set := a.eq[k]
		if set == nil {
			set = map[string]struct{}{}
			a.eq[k] = set
		}
		set[m.ID] = struct{}{}
	})
	a.rg.put(m.ID, &f)
}

func (a *attrs) remove(id string) {
	a.mu.Lock()
	a.removeLocked(id)
	a.mu.Unlock()
}

func (a *attrs) removeLocked(id string) {
	f, ok := a.m[id]
	if !ok {
		return
	}
	delete(a.m, id)
	a.rg.remove(id, f)
	a.each(f, func(k eqKey) {
		if set := a.eq[k]; set != nil {
			delete(set, id)
			if len(set) == 0 {
				delete(a.eq, k)
			}
		}
	})
}

// each calls fn with every equality key of f.
func (a *attrs) each(f *filter.Fields, fn func(eqKey)) {
	if f.Source != "" {
		fn(eqKey{Source: true, Val: memory.String(f.Source)})
	}
	for k, v := range f.Metadata {
		fn(eqKey{Key: k, Val: v})
	}
}

// Allowed is the set of a namespace's memories a filter accepts.
type Allowed struct {
	IDs  []string
	set  map[string]struct{}
	Live int // memories in the namespace when it was built
}

// Has reports whether id is allowed.
func (a *Allowed) Has(id string) bool { _, ok := a.set[id]; return ok }

// Len is the number of allowed memories.
func (a *Allowed) Len() int { return len(a.IDs) }

// Allowed returns the memories of s that m matches. It reads only the
// memories of the smallest set that a top-level condition selects from
// an index: those holding one of an equality's values, or those whose
// value lies in a range; every memory when the filter has neither.
func (s *Set) Allowed(m *filter.Matcher) *Allowed {
	a := s.attrs
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := &Allowed{set: map[string]struct{}{}, Live: len(a.m)}
	add := func(id string, f *filter.Fields) {
		if f != nil && m.MatchPtr(f) {
			out.IDs = append(out.IDs, id)
			out.set[id] = struct{}{}
		}
	}
	// The smallest equality: its sets' sizes are known.
	var best []map[string]struct{}
	bestN := -1
	for _, e := range m.Equalities() {
		var sets []map[string]struct{}
		n := 0
		for _, v := range e.Values {
			set := a.eq[eqKey{Source: e.Source, Key: e.Key, Val: v}]
			if e.Source {
				set = a.eq[eqKey{Source: true, Val: v}]
			}
			if set != nil {
				sets = append(sets, set)
				n += len(set)
			}
		}
		if bestN < 0 || n < bestN {
			best, bestN = sets, n
		}
	}
	// A range is counted by reading it, so only up to the best so far.
	var inRange []string
	ranged := false
	for _, iv := range m.Intervals() {
		var ids []string
		whole := true
		a.rg.in(iv, func(id string) bool {
			if bestN >= 0 && len(ids) >= bestN {
				whole = false
				return false
			}
			ids = append(ids, id)
			return true
		})
		if whole {
			inRange, bestN, ranged = ids, len(ids), true
		}
	}
	switch {
	case ranged:
		// A memory has one value per key: no ID comes twice.
		for _, id := range inRange {
			add(id, a.m[id])
		}
	case bestN >= 0:
		for _, set := range best {
			for id := range set {
				if _, dup := out.set[id]; !dup {
					add(id, a.m[id])
				}
			}
		}
	default:
		for id, f := range a.m {
			add(id, f)
		}
	}
	return out
}
