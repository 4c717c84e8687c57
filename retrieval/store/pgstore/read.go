package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// walkPage is how many rows List, ForEach and CheckProgress read per
// query: they page through a namespace (or the database) instead of
// holding all of it, or one query, for the whole walk.
const walkPage = 256

// Get returns the memory ns/id, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ns, id string) (memory.Memory, error) {
	if err := store.ValidateKeys(ns, id); err != nil {
		return memory.Memory{}, err
	}
	var m memory.Memory
	err := s.call(context.Background(), "memory "+ns+"/"+id, func(ctx context.Context) error {
		var raw []byte
		err := s.pool.QueryRow(ctx, `SELECT memory FROM rerankd_memories WHERE ns = $1 AND id = $2 AND NOT deleted`,
			ns, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		m, err = store.UnmarshalMemory(raw, ns, id)
		return err
	})
	return m, err
}

// Vector returns the embedding of ns/id, or an error wrapping
// store.ErrNotFound if the memory has none.
func (s *Store) Vector(ns, id string) ([]float32, error) {
	if err := store.ValidateKeys(ns, id); err != nil {
		return nil, err
	}
	var v []float32
	err := s.call(context.Background(), "vector "+ns+"/"+id, func(ctx context.Context) error {
		var raw []byte
		err := s.pool.QueryRow(ctx, `SELECT vector FROM rerankd_memories WHERE ns = $1 AND id = $2 AND NOT deleted`,
			ns, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && raw == nil) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		v, err = decodeVector(raw, ns, id)
		return err
	})
	return v, err
}

// GetMany returns the records of the IDs of ns that exist, in the order
// of ids, read by one query; missing IDs are skipped.
func (s *Store) GetMany(ns string, ids []string, withVectors bool) ([]store.Record, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	for _, id := range ids {
		if err := memory.ValidateID(id); err != nil {
			return nil, fmt.Errorf("pgstore: %w", err)
		}
	}
	out := make([]store.Record, 0, len(ids))
	err := s.call(context.Background(), fmt.Sprintf("get %d from %s", len(ids), ns), func(ctx context.Context) error {
		out = out[:0]
		if len(ids) == 0 {
			return nil
		}
		rows, err := s.pool.Query(ctx, `SELECT id, memory, CASE WHEN $3 THEN vector END FROM rerankd_memories
			WHERE ns = $1 AND id = ANY($2) AND NOT deleted`, ns, ids, withVectors)
		if err != nil {
			return err
		}
		found := make(map[string]store.Record, len(ids))
		if err := scanRecords(rows, ns, func(r store.Record) { found[r.Memory.ID] = r }); err != nil {
			return err
		}
		for _, id := range ids {
			if r, ok := found[id]; ok {
				out = append(out, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanRecords reads (id, memory, vector) rows of ns into records.
func scanRecords(rows pgx.Rows, ns string, fn func(store.Record)) error {
	var id string
	var mem, vec []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &mem, &vec}, func() error {
		r, err := record(ns, id, mem, vec)
		if err != nil {
			return err
		}
		fn(r)
		return nil
	})
	return err
}

// record decodes a live row.
func record(ns, id string, mem, vec []byte) (store.Record, error) {
	m, err := store.UnmarshalMemory(mem, ns, id)
	if err != nil {
		return store.Record{}, err
	}
	r := store.Record{Memory: m}
	if vec != nil {
		if r.Vector, err = decodeVector(vec, ns, id); err != nil {
			return store.Record{}, err
		}
	}
	return r, nil
}

// Page returns up to limit records of ns with IDs strictly after `after`
// (byte order; "" starts at the beginning), and the ID to pass as `after`
// for the next page ("" when there is none). Each page is one query.
func (s *Store) Page(ns, after string, limit int, withVectors bool) ([]store.Record, string, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, "", fmt.Errorf("pgstore: %w", err)
	}
	if limit < 1 || limit > store.MaxPage {
		return nil, "", fmt.Errorf("pgstore: %w: page limit %d not in 1..%d", store.ErrInvalid, limit, store.MaxPage)
	}
	var out []store.Record
	var next string
	err := s.call(context.Background(), "page of "+ns, func(ctx context.Context) (err error) {
		out, next, err = s.page(ctx, ns, after, limit, withVectors)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

func (s *Store) page(ctx context.Context, ns, after string, limit int, withVectors bool) ([]store.Record, string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, memory, CASE WHEN $4 THEN vector END FROM rerankd_memories
		WHERE ns = $1 AND id > $2 AND NOT deleted ORDER BY id LIMIT $3`, ns, cursorID(after), limit+1, withVectors)
	if err != nil {
		return nil, "", err
	}
	var out []store.Record
	if err := scanRecords(rows, ns, func(r store.Record) { out = append(out, r) }); err != nil {
		return nil, "", err
	}
	if len(out) > limit {
		return out[:limit], out[limit-1].Memory.ID, nil
	}
	return out, "", nil
}

// List calls fn for every memory of ns in ID byte order. It reads a page
// at a time (each its own query, not one snapshot: a memory written while
// List runs may or may not be seen), and calls fn between queries, so fn
// may call the Store. An error from fn stops List and is returned as is.
func (s *Store) List(ns string, fn func(memory.Memory) error) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	after := ""
	for {
		var recs []store.Record
		var next string
		err := s.call(context.Background(), "list "+ns, func(ctx context.Context) (err error) {
			recs, next, err = s.page(ctx, ns, after, walkPage, false)
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r.Memory); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// Namespaces returns the namespaces holding at least one memory, sorted.
func (s *Store) Namespaces() ([]string, error) {
	var out []string
	err := s.call(context.Background(), "namespaces", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT ns FROM rerankd_namespaces WHERE live > 0 ORDER BY ns`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if len(out) == 0 {
			out = nil
		}
		return err
	})
	return out, err
}

// Count returns the number of memories in ns (0 if it has none).
func (s *Store) Count(ns string) (int, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	var n int64
	err := s.call(context.Background(), "count "+ns, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT live FROM rerankd_namespaces WHERE ns = $1`, ns).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			n, err = 0, nil
		}
		return err
	})
	return int(n), err
}

// ForEach calls fn for every memory of every namespace (namespaces
// sorted, IDs in byte order) with its vector. Like List it reads a page
// at a time, not one snapshot, and fn may call the Store; an error from fn
// stops it and is returned as is. With store.WithProgress, total is the
// number of memories when it started.
func (s *Store) ForEach(fn func(store.Record) error, opts ...store.ForEachOption) error {
	progress, every := store.ForEachSettings(opts...)
	total := 0
	if progress != nil {
		err := s.call(context.Background(), "count memories", func(ctx context.Context) error {
			return s.pool.QueryRow(ctx, `SELECT coalesce(sum(live), 0)::bigint FROM rerankd_namespaces`).Scan(&total)
		})
		if err != nil {
			return err
		}
	}
	done := 0
	afterNS, afterID := "", ""
	for {
		var recs []store.Record
		err := s.call(context.Background(), "for each memory", func(ctx context.Context) error {
			recs = recs[:0]
			rows, err := s.pool.Query(ctx, `SELECT ns, id, memory, vector FROM rerankd_memories
				WHERE (ns, id) > ($1, $2) AND NOT deleted ORDER BY ns, id LIMIT $3`, afterNS, afterID, walkPage)
			if err != nil {
				return err
			}
			var ns, id string
			var mem, vec []byte
			_, err = pgx.ForEachRow(rows, []any{&ns, &id, &mem, &vec}, func() error {
				r, err := record(ns, id, mem, vec)
				recs = append(recs, r)
				return err
			})
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
			done++
			if progress != nil && done%every == 0 {
				progress(done, total)
			}
		}
		if len(recs) < walkPage {
			if progress != nil {
				progress(done, total)
			}
			return nil
		}
		last := recs[len(recs)-1].Memory
		afterNS, afterID = last.Namespace, last.ID
	}
}

// VectorGen returns ns's vector generation (zero if none is recorded).
func (s *Store) VectorGen(ns string) (store.VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return store.VectorGen{}, fmt.Errorf("pgstore: %w", err)
	}
	var g store.VectorGen
	err := s.call(context.Background(), "vector generation of "+ns, func(ctx context.Context) error {
		var seq, stamp int64
		err := s.pool.QueryRow(ctx, `SELECT vecgen_seq, vecgen_stamp FROM rerankd_namespaces WHERE ns = $1`, ns).
			Scan(&seq, &stamp)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		g = vecGen(seq, stamp)
		return err
	})
	return g, err
}

// VectorGens returns the vector generation of every namespace that has
// one, read by one query.
func (s *Store) VectorGens() (map[string]store.VectorGen, error) {
	out := map[string]store.VectorGen{}
	err := s.call(context.Background(), "vector generations", func(ctx context.Context) error {
		clear(out)
		rows, err := s.pool.Query(ctx, `SELECT ns, vecgen_seq, vecgen_stamp FROM rerankd_namespaces
			WHERE vecgen_seq <> 0 OR vecgen_stamp <> 0`)
		if err != nil {
			return err
		}
		var ns string
		var seq, stamp int64
		_, err = pgx.ForEachRow(rows, []any{&ns, &seq, &stamp}, func() error {
			out[ns] = vecGen(seq, stamp)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
