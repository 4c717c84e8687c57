package bolt

import (
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Put stores m (replacing any memory with the same namespace and ID) and its
// embedding vec. A nil vec removes any previous embedding of that ID, so a
// stored vector never outlives the text it was computed from. Put returns
// only after the write is durable (see Options.NoSync).
func (s *Store) Put(m memory.Memory, vec []float32) error {
	return s.PutBatch([]store.Item{{Memory: m, Vector: vec}})
}

// PutBatch stores all items in one transaction: either every item is written
// and durable, or (on any validation or I/O error) none is. Items are applied
// in order, so a later duplicate (namespace, ID) wins.
func (s *Store) PutBatch(items []store.Item) error {
	if len(items) == 0 {
		return nil
	}
	type encoded struct {
		ns, id   []byte
		mem, vec []byte
	}
	recs := make([]encoded, len(items))
	for i, it := range items {
		m := it.Memory.Normalize()
		if err := m.Validate(); err != nil {
			return fmt.Errorf("store: put item %d (%s/%s): %w", i, m.Namespace, m.ID, err)
		}
		if it.Vector != nil {
			if err := store.ValidateVector(it.Vector, s.opts.Dimension); err != nil {
				return fmt.Errorf("store: put item %d (%s/%s): %w", i, m.Namespace, m.ID, err)
			}
			recs[i].vec = encodeVector(it.Vector)
		}
		b, err := encodeMemory(m)
		if err != nil {
			return fmt.Errorf("store: put item %d (%s/%s): %w", i, m.Namespace, m.ID, err)
		}
		recs[i].ns, recs[i].id, recs[i].mem = []byte(m.Namespace), []byte(m.ID), b
	}
	err := s.update(func(tx *bbolt.Tx) error {
		memTop, embTop := tx.Bucket(bucketMemories), tx.Bucket(bucketEmbeddings)
		changed := map[string]bool{} // namespaces whose vectors this batch changes
		for _, r := range recs {
			mb, err := memTop.CreateBucketIfNotExists(r.ns)
			if err != nil {
				return err
			}
			if err := mb.Put(r.id, r.mem); err != nil {
				return err
			}
			if r.vec == nil {
				if eb := embTop.Bucket(r.ns); eb != nil && eb.Get(r.id) != nil {
					if err := eb.Delete(r.id); err != nil {
						return err
					}
					changed[string(r.ns)] = true
				}
				continue
			}
			eb, err := embTop.CreateBucketIfNotExists(r.ns)
			if err != nil {
				return err
			}
			if err := eb.Put(r.id, r.vec); err != nil {
				return err
			}
			changed[string(r.ns)] = true
		}
		for ns := range changed {
			if _, err := bumpVectorGen(tx, []byte(ns)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: put %d item(s): %w", len(items), err)
	}
	return nil
}

// Delete removes the memory ns/id and its embedding, durably. It returns an
// error wrapping store.ErrNotFound if the memory does not exist. Deleting the last
// memory of a namespace removes the namespace.
func (s *Store) Delete(ns, id string) error {
	if err := store.ValidateKeys(ns, id); err != nil {
		return err
	}
	err := s.update(func(tx *bbolt.Tx) error {
		mb, eb := nsBuckets(tx, ns)
		if mb == nil || mb.Get([]byte(id)) == nil {
			return store.ErrNotFound
		}
		if err := mb.Delete([]byte(id)); err != nil {
			return err
		}
		hadVector := eb != nil && eb.Get([]byte(id)) != nil
		if hadVector {
			if err := eb.Delete([]byte(id)); err != nil {
				return err
			}
		}
		if k, _ := mb.Cursor().First(); k == nil {
			if err := tx.Bucket(bucketMemories).DeleteBucket([]byte(ns)); err != nil {
				return err
			}
			if eb != nil {
				if err := tx.Bucket(bucketEmbeddings).DeleteBucket([]byte(ns)); err != nil {
					return err
				}
			}
			// The generation goes with the namespace; a re-created one
			// starts from zero, and its first vector draws a new stamp.
			return dropVectorGen(tx, []byte(ns))
		}
		if hadVector {
			_, err := bumpVectorGen(tx, []byte(ns))
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: delete %s/%s: %w", ns, id, err)
	}
	return nil
}

// DeleteNamespace removes every memory of ns with its embedding and the
// namespace's vector generation, in one transaction, and returns how many
// memories it held (0, and no error, for a namespace that does not
// exist).
func (s *Store) DeleteNamespace(ns string) (int, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	n := 0
	err := s.update(func(tx *bbolt.Tx) error {
		mb, eb := nsBuckets(tx, ns)
		if mb == nil {
			return nil
		}
		n = mb.Stats().KeyN
		if err := tx.Bucket(bucketMemories).DeleteBucket([]byte(ns)); err != nil {
			return err
		}
		if eb != nil {
			if err := tx.Bucket(bucketEmbeddings).DeleteBucket([]byte(ns)); err != nil {
				return err
			}
		}
		return dropVectorGen(tx, []byte(ns))
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete namespace %s: %w", ns, err)
	}
	return n, nil
}
