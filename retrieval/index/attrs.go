package index

import (
	"sync"

	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// attrs holds what filters read of each memory (its time, source and
// metadata), and which memories hold each source and metadata value, so
// that a filter's allow-list is built from the memories holding its
// equality's values rather than from every memory.
type attrs struct {
	mu sync.RWMutex
	m  map[string]*filter.Fields
	eq map[eqKey]map[string]struct{}
}

// eqKey is one source (Source set, Key "") or one metadata key's value.
type eqKey struct {
	Source bool
	Key    string
	Val    memory.Value
}

func newAttrs() *attrs {
	return &attrs{m: map[string]*filter.Fields{}, eq: map[eqKey]map[string]struct{}{}}
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

// Allowed returns the memories of s that m matches. With a top-level
// equality it reads only the memories holding one of its values (the
// smallest such set); otherwise every memory.
func (s *Set) Allowed(m *filter.Matcher) *Allowed {
	a := s.attrs
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := &Allowed{set: map[string]struct{}{}, Live: len(a.m)}
	add := func(id string, f *filter.Fields) {
		if m.MatchPtr(f) {
			out.IDs = append(out.IDs, id)
			out.set[id] = struct{}{}
		}
	}
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
	if bestN >= 0 {
		for _, set := range best {
			for id := range set {
				if _, dup := out.set[id]; !dup {
					add(id, a.m[id])
				}
			}
		}
		return out
	}
	for id, f := range a.m {
		add(id, f)
	}
	return out
}
