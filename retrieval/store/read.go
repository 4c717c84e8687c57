package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// Get returns the memory ns/id, or an error wrapping ErrNotFound.
func (s *Store) Get(ns, id string) (memory.Memory, error) {
	if err := validateKeys(ns, id); err != nil {
		return memory.Memory{}, err
	}
	var m memory.Memory
	err := s.view(func(tx *bolt.Tx) error {
		mb, _ := nsBuckets(tx, ns)
		var v []byte
		if mb != nil {
			v = mb.Get([]byte(id))
		}
		if v == nil {
			return fmt.Errorf("store: memory %s/%s: %w", ns, id, ErrNotFound)
		}
		var err error
		m, err = decodeMemoryAt(v, ns, id)
		return err
	})
	return m, err
}

// Vector returns the embedding of ns/id, or an error wrapping ErrNotFound if
// the memory has none. The slice is a fresh copy owned by the caller.
func (s *Store) Vector(ns, id string) ([]float32, error) {
	if err := validateKeys(ns, id); err != nil {
		return nil, err
	}
	var vec []float32
	err := s.view(func(tx *bolt.Tx) error {
		_, eb := nsBuckets(tx, ns)
		var v []byte
		if eb != nil {
			v = eb.Get([]byte(id))
		}
		if v == nil {
			return fmt.Errorf("store: vector %s/%s: %w", ns, id, ErrNotFound)
		}
		var err error
		if vec, err = decodeVector(v); err != nil {
			return recordErr("vector", ns, id, err)
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
	return s.view(func(tx *bolt.Tx) error {
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
	err := s.view(func(tx *bolt.Tx) error {
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
	err := s.view(func(tx *bolt.Tx) error {
		if mb, _ := nsBuckets(tx, ns); mb != nil {
			n = mb.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// Record is one memory with its embedding (nil if it has none), as passed to
// ForEach.
type Record struct {
	Memory memory.Memory
	Vector []float32
}

// ForEachOption configures ForEach.
type ForEachOption func(*forEachConfig)

type forEachConfig struct {
	progress func(done, total int)
	every    int
}

// WithProgress makes ForEach call fn(done, total) after every `every`
// records and once at the end; total is the number of memories in the store
// when iteration started. every ≤ 0 means 1000.
func WithProgress(every int, fn func(done, total int)) ForEachOption {
	return func(c *forEachConfig) {
		if every <= 0 {
			every = 1000
		}
		c.progress, c.every = fn, every
	}
}

// ForEach calls fn for every memory of every namespace (namespaces in sorted
// order, IDs in byte order) with its vector, inside one read transaction. It
// is meant for rebuilding in-memory indexes at start-up. If fn returns an
// error, iteration stops and ForEach returns it unchanged; a corrupt record
// stops iteration with an error naming it (use Check to list all of them).
// fn must not call the Store's write methods.
func (s *Store) ForEach(fn func(Record) error, opts ...ForEachOption) error {
	var cfg forEachConfig
	for _, o := range opts {
		o(&cfg)
	}
	return s.view(func(tx *bolt.Tx) error {
		memTop := tx.Bucket(bucketMemories)
		total := 0
		if cfg.progress != nil {
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
				rec := Record{Memory: m}
				if eb != nil {
					if raw := eb.Get(k); raw != nil {
						if rec.Vector, err = decodeVector(raw); err != nil {
							return recordErr("vector", ns, id, err)
						}
					}
				}
				if err := fn(rec); err != nil {
					return err
				}
				done++
				if cfg.progress != nil && done%cfg.every == 0 {
					cfg.progress(done, total)
				}
				return nil
			})
		})
		if err == nil && cfg.progress != nil {
			cfg.progress(done, total)
		}
		return err
	})
}

// decodeMemoryAt decodes a memory record read from key ns/id and checks that
// it belongs there.
func decodeMemoryAt(v []byte, ns, id string) (memory.Memory, error) {
	m, err := decodeMemory(v)
	if err == nil {
		err = checkKey(m, ns, id)
	}
	if err != nil {
		return memory.Memory{}, recordErr("memory", ns, id, err)
	}
	return m, nil
}
