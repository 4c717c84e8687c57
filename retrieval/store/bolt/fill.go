package bolt

import (
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// PutVectorsIf stores vectors for existing memories of ns, in one
// transaction, each only if keep accepts the memory as it is now: keep is
// called inside the write transaction with the stored record (its vector
// nil when it has none or the stored one is damaged). This is a
// compare-and-set for filling in vectors computed from a text read
// earlier: keep checks that the text is still the one embedded and that
// no vector was stored meanwhile, so a newer write is never overwritten.
// Memories that no longer exist, or whose record does not decode, are
// skipped. It returns the IDs written, sorted, and gives ns a new vector
// generation if any was. keep must not call the Store.
func (s *Store) PutVectorsIf(ns string, vecs map[string][]float32, keep func(store.Record) bool) ([]string, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	ids := make([]string, 0, len(vecs))
	enc := make(map[string][]byte, len(vecs))
	for id, v := range vecs {
		if err := memory.ValidateID(id); err != nil {
			return nil, fmt.Errorf("store: put vector %s/%s: %w", ns, id, err)
		}
		if err := store.ValidateVector(v, s.opts.Dimension); err != nil {
			return nil, fmt.Errorf("store: put vector %s/%s: %w", ns, id, err)
		}
		ids = append(ids, id)
		enc[id] = encodeVector(v)
	}
	slices.Sort(ids)
	var written []string
	err := s.update(func(tx *bbolt.Tx) error {
		mb, eb := nsBuckets(tx, ns)
		if mb == nil {
			return nil
		}
		for _, id := range ids {
			v := mb.Get([]byte(id))
			if v == nil {
				continue
			}
			m, err := decodeMemoryAt(v, ns, id)
			if err != nil {
				continue // damaged: not ours to touch; Check reports it
			}
			cur := store.Record{Memory: m}
			if eb != nil {
				if raw := eb.Get([]byte(id)); raw != nil {
					cur.Vector, _ = decodeVector(raw) // damaged reads as none
				}
			}
			if !keep(cur) {
				continue
			}
			if eb == nil {
				if eb, err = tx.Bucket(bucketEmbeddings).CreateBucket([]byte(ns)); err != nil {
					return err
				}
			}
			if err := eb.Put([]byte(id), enc[id]); err != nil {
				return err
			}
			written = append(written, id)
		}
		if len(written) == 0 {
			return nil
		}
		_, err := bumpVectorGen(tx, []byte(ns))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: put %d vector(s) in %s: %w", len(vecs), ns, err)
	}
	return written, nil
}
