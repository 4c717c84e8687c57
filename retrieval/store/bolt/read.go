package bolt

import (
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Get returns the memory ns/id, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ns, id string) (memory.Memory, error) {
	if err := store.ValidateKeys(ns, id); err != nil {
		return memory.Memory{}, err
	}
	var m memory.Memory
	err := s.view(func(tx *bbolt.Tx) error {
		mb, _ := nsBuckets(tx, ns)
		var v []byte
		if mb != nil {
			v = mb.Get([]byte(id))
		}
		if v == nil {
			return fmt.Errorf("store: memory %s/%s: %w", ns, id, store.ErrNotFound)
		}
		var err error
		m, err = decodeMemoryAt(v, ns, id)
		return err
	})
	return m, err
}

// Vector returns the embedding of ns/id, or an error wrapping store.ErrNotFound if
// the memory has none. The slice is a fresh copy owned by the caller.
func (s *Store) Vector(ns, id string) ([]float32, error) {
	if err := store.ValidateKeys(ns, id); err != nil {
		return nil, err
	}
	var vec []float32
	err := s.view(func(tx *bbolt.Tx) error {
		_, eb := nsBuckets(tx, ns)
		var v []byte
		if eb != nil {
			v = eb.Get([]byte(id))
		}
		if v == nil {
			return fmt.Errorf("store: vector %s/%s: %w", ns, id, store.ErrNotFound)
		}
		var err error
		if vec, err = decodeVector(v); err != nil {
			return store.RecordErr("vector", ns, id, err)
		}
		return nil
	})
	return vec, err
}

// List calls fn for every memory in ns, in ID byte order, inside one read
// transaction (a consistent snapshot). A missing namespace yields no calls.
// If fn returns an error iteration stops and List returns it unchanged.
// fn must not call the Store's write methods (it would deadlock).
func (s *Store) List(ns string, fn func(memory.Memory) error) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return s.view(func(tx *bbolt.Tx) error {
		mb, _ := nsBuckets(tx, ns)
		if mb == nil {
			return nil
		}
		return mb.ForEach(func(k, v []byte) error {
			m, err := decodeMemoryAt(v, ns, string(k))
			if err != nil {
				return err
			}
			return fn(m)
		})
	})
}

// Namespaces returns all namespaces holding at least one memory, sorted.
func (s *Store) Namespaces() ([]string, error) {
	var out []string
	err := s.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMemories).ForEachBucket(func(k []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}

// Count returns the number of memories in ns (0 for a missing namespace).
func (s *Store) Count(ns string) (int, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	n := 0
	err := s.view(func(tx *bbolt.Tx) error {
		if mb, _ := nsBuckets(tx, ns); mb != nil {
			n = mb.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// ForEach calls fn for every memory of every namespace (namespaces in sorted
// order, IDs in byte order) with its vector, inside one read transaction. It
// is meant for rebuilding in-memory indexes at start-up. If fn returns an
// error, iteration stops and ForEach returns it unchanged; a corrupt record
// stops iteration with an error naming it (use Check to list all of them).
// fn must not call the Store's write methods.
func (s *Store) ForEach(fn func(store.Record) error, opts ...store.ForEachOption) error {
	progress, every := store.ForEachSettings(opts...)
	return s.view(func(tx *bbolt.Tx) error {
		memTop := tx.Bucket(bucketMemories)
		total := 0
		if progress != nil {
			if err := memTop.ForEachBucket(func(k []byte) error {
				total += memTop.Bucket(k).Stats().KeyN
				return nil
			}); err != nil {
				return err
			}
		}
		done := 0
		err := memTop.ForEachBucket(func(nsKey []byte) error {
			ns := string(nsKey)
			mb, eb := nsBuckets(tx, ns)
			return mb.ForEach(func(k, v []byte) error {
				id := string(k)
				m, err := decodeMemoryAt(v, ns, id)
				if err != nil {
					return err
				}
				rec := store.Record{Memory: m}
				if eb != nil {
					if raw := eb.Get(k); raw != nil {
						if rec.Vector, err = decodeVector(raw); err != nil {
							return store.RecordErr("vector", ns, id, err)
						}
					}
				}
				if err := fn(rec); err != nil {
					return err
				}
				done++
				if progress != nil && done%every == 0 {
					progress(done, total)
				}
				return nil
			})
		})
		if err == nil && progress != nil {
			progress(done, total)
		}
		return err
	})
}

// decodeMemoryAt decodes a memory record read from key ns/id and checks that
// it belongs there.
func decodeMemoryAt(v []byte, ns, id string) (memory.Memory, error) {
	payload, err := memPayload(v)
	if err != nil {
		return memory.Memory{}, store.RecordErr("memory", ns, id, err)
	}
	return store.UnmarshalMemory(payload, ns, id)
}
