package bolt

import (
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Page returns up to limit records of ns with IDs strictly after `after`
// (in byte order; "" starts at the beginning), and the ID to pass as
// `after` for the next page ("" when there is none). Each page is its own
// read transaction: a caller walking a large namespace page by page never
// holds one transaction for the whole walk, so writers are not blocked,
// and it sees writes made between pages. withVectors also loads each
// record's embedding.
func (s *Store) Page(ns, after string, limit int, withVectors bool) ([]store.Record, string, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, "", fmt.Errorf("store: %w", err)
	}
	if limit < 1 || limit > store.MaxPage {
		return nil, "", fmt.Errorf("store: %w: page limit %d not in 1..%d", store.ErrInvalid, limit, store.MaxPage)
	}
	var out []store.Record
	next := ""
	err := s.view(func(tx *bbolt.Tx) error {
		mb, eb := nsBuckets(tx, ns)
		if mb == nil {
			return nil
		}
		c := mb.Cursor()
		k, v := c.First()
		if after != "" {
			k, v = c.Seek([]byte(after))
			if k != nil && string(k) == after {
				k, v = c.Next()
			}
		}
		for ; k != nil; k, v = c.Next() {
			if len(out) == limit {
				next = out[len(out)-1].Memory.ID
				return nil
			}
			rec, err := readRecord(eb, k, v, ns, withVectors)
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: page of %s: %w", ns, err)
	}
	return out, next, nil
}

// GetMany returns the records of the given IDs of ns that exist, in the
// order of ids, in one read transaction; missing IDs are skipped (a search
// may race with a delete). Invalid IDs are an error.
func (s *Store) GetMany(ns string, ids []string, withVectors bool) ([]store.Record, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	for _, id := range ids {
		if err := memory.ValidateID(id); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	out := make([]store.Record, 0, len(ids))
	err := s.view(func(tx *bbolt.Tx) error {
		mb, eb := nsBuckets(tx, ns)
		if mb == nil {
			return nil
		}
		for _, id := range ids {
			v := mb.Get([]byte(id))
			if v == nil {
				continue
			}
			rec, err := readRecord(eb, []byte(id), v, ns, withVectors)
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %d from %s: %w", len(ids), ns, err)
	}
	return out, nil
}

// readRecord decodes the memory at k/v and, if asked, its vector from eb.
// Decoded slices are copies: nothing returned points into the mmap.
func readRecord(eb *bbolt.Bucket, k, v []byte, ns string, withVector bool) (store.Record, error) {
	id := string(k)
	m, err := decodeMemoryAt(v, ns, id)
	if err != nil {
		return store.Record{}, err
	}
	rec := store.Record{Memory: m}
	if withVector && eb != nil {
		if raw := eb.Get(k); raw != nil {
			if rec.Vector, err = decodeVector(raw); err != nil {
				return store.Record{}, store.RecordErr("vector", ns, id, err)
			}
		}
	}
	return rec, nil
}
