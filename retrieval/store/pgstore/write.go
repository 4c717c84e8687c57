package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// notifyChannel is the LISTEN/NOTIFY channel: every write transaction
// notifies it with the name of each namespace it changed.
const notifyChannel = "rerankd_changes"

// Put stores m (replacing any memory with the same namespace and ID) and
// its embedding vec; a nil vec removes a previous embedding. It returns
// after the transaction has committed.
func (s *Store) Put(m memory.Memory, vec []float32) error {
	return s.PutBatch([]store.Item{{Memory: m, Vector: vec}})
}

// nsPut is what PutBatch writes to one namespace.
type nsPut struct {
	ns      string
	ids     []string // sorted, unique
	mems    [][]byte
	times   []time.Time
	vecs    [][]byte // nil element: no vector
	anyVec  bool     // some item (even one a later duplicate replaced) had a vector
	seq     int64    // the transaction's sequence for ns
	live    int64    // live memories before the write
	vecSeq  int64    // vector generation sequence before the write
	existed map[string]rowState
}

// rowState is a stored row as a write finds it.
type rowState struct{ deleted, hasVector bool }

// PutBatch stores all items in one transaction: every item or none. A
// later duplicate (namespace, ID) wins. The items are validated and
// encoded before any SQL; the transaction takes a handful of round trips
// whatever the number of items.
func (s *Store) PutBatch(items []store.Item) error {
	if len(items) == 0 {
		return nil
	}
	type enc struct {
		mem  []byte
		time time.Time
		vec  []byte
	}
	byNS := map[string]map[string]enc{}
	anyVec := map[string]bool{}
	for i, it := range items {
		m := it.Memory.Normalize()
		if err := m.Validate(); err != nil {
			return fmt.Errorf("pgstore: put item %d (%s/%s): %w", i, m.Namespace, m.ID, err)
		}
		var e enc
		if it.Vector != nil {
			if err := store.ValidateVector(it.Vector, s.opts.Dimension); err != nil {
				return fmt.Errorf("pgstore: put item %d (%s/%s): %w", i, m.Namespace, m.ID, err)
			}
			e.vec = encodeVector(it.Vector)
			anyVec[m.Namespace] = true
		}
		b, err := store.MarshalMemory(m)
		if err != nil {
			return fmt.Errorf("pgstore: put item %d (%s/%s): %w: %w", i, m.Namespace, m.ID, store.ErrInvalid, err)
		}
		e.mem, e.time = b, m.Time
		if byNS[m.Namespace] == nil {
			byNS[m.Namespace] = map[string]enc{}
		}
		byNS[m.Namespace][m.ID] = e
	}
	puts := make([]*nsPut, 0, len(byNS))
	for ns, rows := range byNS {
		p := &nsPut{ns: ns, anyVec: anyVec[ns]}
		for id := range rows {
			p.ids = append(p.ids, id)
		}
		slices.Sort(p.ids)
		for _, id := range p.ids {
			e := rows[id]
			p.mems, p.times, p.vecs = append(p.mems, e.mem), append(p.times, e.time), append(p.vecs, e.vec)
		}
		puts = append(puts, p)
	}
	// One order for every transaction: namespace locks never deadlock.
	slices.SortFunc(puts, func(a, b *nsPut) int { return cmp.Compare(a.ns, b.ns) })
	rows := 0
	for _, p := range puts {
		rows += len(p.ids)
	}
	err := s.call(context.Background(), fmt.Sprintf("put %d item(s)", len(items)), func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error { return putTx(ctx, tx, puts) })
	})
	if err == nil {
		s.maybeAnalyze(rows)
	}
	return err
}

func putTx(ctx context.Context, tx pgx.Tx, puts []*nsPut) error {
	// Round trip 1: lock every namespace (in order) and take its next
	// sequence, then read what its rows are now.
	b := &pgx.Batch{}
	for _, p := range puts {
		b.Queue(`INSERT INTO rerankd_namespaces (ns) VALUES ($1) ON CONFLICT DO NOTHING`, p.ns)
		b.Queue(`UPDATE rerankd_namespaces SET seq = seq + 1 WHERE ns = $1 RETURNING seq, live, vecgen_seq`, p.ns).
			QueryRow(func(r pgx.Row) error { return r.Scan(&p.seq, &p.live, &p.vecSeq) })
	}
	for _, p := range puts {
		p.existed = make(map[string]rowState, len(p.ids))
		b.Queue(`SELECT id, deleted, vector IS NOT NULL FROM rerankd_memories WHERE ns = $1 AND id = ANY($2)`, p.ns, p.ids).
			Query(func(rows pgx.Rows) error {
				var id string
				var st rowState
				_, err := pgx.ForEachRow(rows, []any{&id, &st.deleted, &st.hasVector}, func() error {
					p.existed[id] = st
					return nil
				})
				return err
			})
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	// Round trip 2: write the rows, the counters and the notifications.
	b = &pgx.Batch{}
	notify := make([]string, 0, len(puts))
	for _, p := range puts {
		live, vecChanged := p.live, p.anyVec
		for _, id := range p.ids {
			st, ok := p.existed[id]
			if !ok || st.deleted {
				live++
			}
			if ok && !st.deleted && st.hasVector {
				vecChanged = true // a nil vector removes it (a given one replaces it)
			}
		}
		b.Queue(`INSERT INTO rerankd_memories (ns, id, seq, deleted, memory, time, vector)
			SELECT $1, u.id, $2, false, u.memory, u.time, u.vector
			FROM unnest($3::text[], $4::bytea[], $5::timestamptz[], $6::bytea[]) AS u(id, memory, time, vector)
			ON CONFLICT (ns, id) DO UPDATE SET seq = EXCLUDED.seq, deleted = false,
				memory = EXCLUDED.memory, time = EXCLUDED.time, vector = EXCLUDED.vector`,
			p.ns, p.seq, p.ids, p.mems, p.times, p.vecs)
		queueCounters(b, p.ns, live, p.vecSeq, vecChanged)
		notify = append(notify, p.ns)
	}
	queueNotify(b, notify)
	return tx.SendBatch(ctx, b).Close()
}

// queueCounters sets ns's live count and, when its vectors changed, a new
// vector generation; a namespace left without memories has none (as the
// bbolt store drops it with the namespace).
func queueCounters(b *pgx.Batch, ns string, live, vecSeq int64, vecChanged bool) {
	switch {
	case live == 0:
		b.Queue(`UPDATE rerankd_namespaces SET live = 0, vecgen_seq = 0, vecgen_stamp = 0 WHERE ns = $1`, ns)
	case vecChanged:
		b.Queue(`UPDATE rerankd_namespaces SET live = $2, vecgen_seq = $3, vecgen_stamp = $4 WHERE ns = $1`,
			ns, live, vecSeq+1, newStamp())
	default:
		b.Queue(`UPDATE rerankd_namespaces SET live = $2 WHERE ns = $1`, ns, live)
	}
}

// queueNotify tells listeners which namespaces the transaction changed
// (delivered at commit, and only if it commits).
func queueNotify(b *pgx.Batch, namespaces []string) {
	b.Queue(`SELECT pg_notify('`+notifyChannel+`', n) FROM unnest($1::text[]) AS n`, namespaces)
}

// newStamp draws a vector generation stamp: random, never zero (a zero
// stamp with a zero sequence reads as "none"), stored as bigint bits.
func newStamp() int64 {
	for {
		if u := rand.Uint64(); u != 0 {
			return int64(u) //nolint:gosec // the bits are the value (store.VectorGen.Stamp)
		}
	}
}

// Delete turns ns/id into a tombstone (so followers learn of the delete)
// and drops its embedding. It fails with store.ErrNotFound, committing
// nothing, when there is no such memory. Deleting the last memory of a
// namespace leaves it without memories and without a vector generation;
// its change sequence goes on.
func (s *Store) Delete(ns, id string) error {
	if err := store.ValidateKeys(ns, id); err != nil {
		return err
	}
	return s.call(context.Background(), "delete "+ns+"/"+id, func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error {
			var seq, live, vecSeq int64
			var st rowState
			nsErr, rowErr := error(nil), error(nil)
			b := &pgx.Batch{}
			b.Queue(`UPDATE rerankd_namespaces SET seq = seq + 1 WHERE ns = $1 RETURNING seq, live, vecgen_seq`, ns).
				QueryRow(func(r pgx.Row) error { nsErr = r.Scan(&seq, &live, &vecSeq); return nil })
			b.Queue(`SELECT deleted, vector IS NOT NULL FROM rerankd_memories WHERE ns = $1 AND id = $2`, ns, id).
				QueryRow(func(r pgx.Row) error { rowErr = r.Scan(&st.deleted, &st.hasVector); return nil })
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			for _, err := range []error{nsErr, rowErr} {
				if errors.Is(err, pgx.ErrNoRows) {
					return store.ErrNotFound
				} else if err != nil {
					return err
				}
			}
			if st.deleted {
				return store.ErrNotFound
			}
			b = &pgx.Batch{}
			b.Queue(`UPDATE rerankd_memories SET seq = $3, deleted = true, memory = NULL, time = now(), vector = NULL
				WHERE ns = $1 AND id = $2`, ns, id, seq)
			queueCounters(b, ns, live-1, vecSeq, st.hasVector)
			queueNotify(b, []string{ns})
			return tx.SendBatch(ctx, b).Close()
		})
	})
}

// PutVectorsIf stores vectors for existing memories of ns in one
// transaction, each only if keep accepts the record as stored now (keep
// runs inside the transaction, with the namespace locked against other
// writers; its vector is nil when there is none or it is damaged).
// Memories that do not exist, or whose record does not decode, are
// skipped. It returns the IDs written, sorted; the rows written take the
// transaction's sequence and ns a new vector generation. Nothing is
// committed (and no sequence taken) when nothing is written. keep must
// not call the Store.
func (s *Store) PutVectorsIf(ns string, vecs map[string][]float32, keep func(store.Record) bool) ([]string, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	ids := make([]string, 0, len(vecs))
	enc := make(map[string][]byte, len(vecs))
	for id, v := range vecs {
		if err := memory.ValidateID(id); err != nil {
			return nil, fmt.Errorf("pgstore: put vector %s/%s: %w", ns, id, err)
		}
		if err := store.ValidateVector(v, s.opts.Dimension); err != nil {
			return nil, fmt.Errorf("pgstore: put vector %s/%s: %w", ns, id, err)
		}
		ids = append(ids, id)
		enc[id] = encodeVector(v)
	}
	slices.Sort(ids)
	var written []string
	err := s.call(context.Background(), fmt.Sprintf("put %d vector(s) in %s", len(vecs), ns), func(ctx context.Context) error {
		written = nil
		if len(ids) == 0 {
			return nil
		}
		return s.write(ctx, func(tx pgx.Tx) error {
			var seq, live, vecSeq int64
			nsErr := error(nil)
			var cur []store.Record
			b := &pgx.Batch{}
			b.Queue(`UPDATE rerankd_namespaces SET seq = seq + 1 WHERE ns = $1 RETURNING seq, live, vecgen_seq`, ns).
				QueryRow(func(r pgx.Row) error { nsErr = r.Scan(&seq, &live, &vecSeq); return nil })
			b.Queue(`SELECT id, memory, vector FROM rerankd_memories
				WHERE ns = $1 AND id = ANY($2) AND NOT deleted ORDER BY id`, ns, ids).
				Query(func(rows pgx.Rows) error {
					var id string
					var mem, vec []byte
					_, err := pgx.ForEachRow(rows, []any{&id, &mem, &vec}, func() error {
						// A damaged memory is skipped: not ours to touch
						// (CheckProgress reports it).
						if m, err := store.UnmarshalMemory(mem, ns, id); err == nil {
							rec := store.Record{Memory: m}
							if vec != nil {
								rec.Vector, _ = decodeVector(vec, ns, id) // damaged reads as none
							}
							cur = append(cur, rec)
						}
						return nil
					})
					return err
				})
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			if errors.Is(nsErr, pgx.ErrNoRows) {
				return errNoCommit
			} else if nsErr != nil {
				return nsErr
			}
			var wIDs []string
			var wVecs [][]byte
			for _, rec := range cur {
				if keep(rec) {
					wIDs = append(wIDs, rec.Memory.ID)
					wVecs = append(wVecs, enc[rec.Memory.ID])
				}
			}
			if len(wIDs) == 0 {
				return errNoCommit
			}
			b = &pgx.Batch{}
			b.Queue(`UPDATE rerankd_memories AS m SET vector = u.vector, seq = $2
				FROM unnest($3::text[], $4::bytea[]) AS u(id, vector)
				WHERE m.ns = $1 AND m.id = u.id`, ns, seq, wIDs, wVecs)
			queueCounters(b, ns, live, vecSeq, true)
			queueNotify(b, []string{ns})
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			written = wIDs
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// BumpVectorGen gives ns a new vector generation without changing its
// vectors (store.ErrNotFound when ns has no memories). It changes no
// memory, so it takes no sequence number and notifies no one.
func (s *Store) BumpVectorGen(ns string) (store.VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return store.VectorGen{}, fmt.Errorf("pgstore: %w", err)
	}
	var g store.VectorGen
	err := s.call(context.Background(), "bump vector generation of "+ns, func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error {
			var seq, stamp int64
			err := tx.QueryRow(ctx, `UPDATE rerankd_namespaces SET vecgen_seq = vecgen_seq + 1, vecgen_stamp = $2
				WHERE ns = $1 AND live > 0 RETURNING vecgen_seq, vecgen_stamp`, ns, newStamp()).Scan(&seq, &stamp)
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			g = vecGen(seq, stamp)
			return err
		})
	})
	return g, err
}

// vecGen reads a generation from its bigint columns.
func vecGen(seq, stamp int64) store.VectorGen {
	return store.VectorGen{Seq: uint64(seq), Stamp: uint64(stamp)} //nolint:gosec // bigint bits (see newStamp)
}

// DeleteNamespace turns every memory of ns into a tombstone (so followers
// learn of each delete), drops their embeddings, the namespace's vector
// generation and its vector index snapshot, in one transaction, and
// returns how many memories it held (0, and no error, for a namespace
// that does not exist).
func (s *Store) DeleteNamespace(ns string) (int, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	n := 0
	err := s.call(context.Background(), "delete namespace "+ns, func(ctx context.Context) error {
		return s.write(ctx, func(tx pgx.Tx) error {
			var seq int64
			err := tx.QueryRow(ctx, `UPDATE rerankd_namespaces SET seq = seq + 1 WHERE ns = $1 RETURNING seq`, ns).Scan(&seq)
			if errors.Is(err, pgx.ErrNoRows) {
				n = 0
				return nil
			} else if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE rerankd_memories SET seq = $2, deleted = true, memory = NULL, time = now(), vector = NULL
				WHERE ns = $1 AND NOT deleted`, ns, seq)
			if err != nil {
				return err
			}
			n = int(tag.RowsAffected())
			b := &pgx.Batch{}
			queueCounters(b, ns, 0, 0, false)
			b.Queue(`DELETE FROM rerankd_snapshot_chunks WHERE ns = $1`, ns)
			b.Queue(`DELETE FROM rerankd_snapshots WHERE ns = $1`, ns)
			queueNotify(b, []string{ns})
			return tx.SendBatch(ctx, b).Close()
		})
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
