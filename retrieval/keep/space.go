package keep

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// Space is one namespace's indexes, the part both keepers share; each
// embeds it in its own namespace state. Mu serialises its writes, so the
// store and the indexes see one memory's writes in the same order; reads
// of the indexes need no lock of their own (the indexes are concurrent).
type Space struct {
	Mu  CtxMutex
	cur atomic.Pointer[index.Set] // swapped whole by a repair

	Lex, Vec atomic.Bool // the lexical and the vector index are built
	// Dirty is set when an index update failed after a durable store
	// write, or the build of the namespace did not finish; the owner's
	// Check rebuilds such a namespace, the follower drops it, and it is
	// not snapshotted.
	Dirty atomic.Bool
}

// Init gives sp its first indexes, and says whether they are built.
func (sp *Space) Init(ix *index.Set, ready bool) {
	sp.cur.Store(ix)
	sp.Lex.Store(ready)
	sp.Vec.Store(ready)
}

// Indexes returns the current indexes; load once per operation.
func (sp *Space) Indexes() *index.Set { return sp.cur.Load() }

// Swap replaces the indexes whole: readers that loaded the old set finish
// on it.
func (sp *Space) Swap(ix *index.Set) { sp.cur.Store(ix) }

// LexReady reports whether the lexical index is built.
func (sp *Space) LexReady() bool { return sp.Lex.Load() }

// VecReady reports whether the vector index is built.
func (sp *Space) VecReady() bool { return sp.Vec.Load() }

// Put puts one memory's current state into ix, sp's indexes (replacing
// any earlier state of its ID), and marks sp dirty when an index refuses
// it: the store has the memory, so the indexes must be rebuilt.
func (sp *Space) Put(ix *index.Set, m memory.Memory, vec []float32) {
	if err := ix.Put(m, vec); err != nil {
		sp.Dirty.Store(true)
	}
}

// Stats returns ns's counts and readiness.
func (sp *Space) Stats(ns string) Stats {
	ix := sp.Indexes()
	st := Stats{Namespace: ns, Indexed: ix.Lex.Len(), Ready: sp.LexReady() && sp.VecReady()}
	if ix.Vec != nil {
		st.Vectors = ix.Vec.Len()
	}
	return st
}

// Spaces maps namespaces to a keeper's namespace state S. Its lock is
// also the fence of Base.Shutdown for a keeper that creates spaces from
// searches (see Create).
type Spaces[S comparable] struct {
	sync.RWMutex
	m map[string]S
}

// Get returns ns's state, or the zero S.
func (s *Spaces[S]) Get(ns string) (S, bool) {
	s.RLock()
	v, ok := s.m[ns]
	s.RUnlock()
	return v, ok
}

// Create returns ns's state, calling create under the lock to create it
// when there is none; create's error is returned as is.
func (s *Spaces[S]) Create(ns string, create func() (S, error)) (S, error) {
	if v, ok := s.Get(ns); ok {
		return v, nil
	}
	s.Lock()
	defer s.Unlock()
	if v, ok := s.m[ns]; ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return v, err
	}
	s.SetLocked(ns, v)
	return v, nil
}

// SetLocked stores ns's state; the lock is held (or nobody else has s).
func (s *Spaces[S]) SetLocked(ns string, v S) {
	if s.m == nil {
		s.m = map[string]S{}
	}
	s.m[ns] = v
}

// Drop forgets ns if its state is still v: the next use builds anew.
func (s *Spaces[S]) Drop(ns string, v S) {
	s.Lock()
	if cur, ok := s.m[ns]; ok && cur == v {
		delete(s.m, ns)
	}
	s.Unlock()
}

// Names returns the namespaces held, sorted.
func (s *Spaces[S]) Names() []string {
	s.RLock()
	names := make([]string, 0, len(s.m))
	for ns := range s.m {
		names = append(names, ns)
	}
	s.RUnlock()
	slices.Sort(names)
	return names
}

// Each calls f for every held namespace, under the read lock.
func (s *Spaces[S]) Each(f func(ns string, v S)) {
	s.RLock()
	defer s.RUnlock()
	for ns, v := range s.m {
		f(ns, v)
	}
}
