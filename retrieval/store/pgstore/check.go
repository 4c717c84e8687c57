package pgstore

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// checkProgressEvery is how many records pass between progress calls.
const checkProgressEvery = 1024

// Check is CheckProgress without progress.
func (s *Store) Check(fn func(store.Problem)) (store.CheckStats, error) {
	return s.CheckProgress(fn, nil)
}

// CheckProgress walks every row (a page per query), decoding and
// validating each, and calls fn (if non-nil) for every problem:
//   - "memory": memory JSON that does not decode, names another ns/id
//     than its row, or fails memory.Validate; a live row without one;
//   - "vector": a vector whose length is not a dimension, or holding NaN
//     or an infinity;
//   - "orphan-vector": a tombstone that kept its memory or vector;
//   - "namespace": a namespace name that fails validation, or whose live
//     count disagrees with its rows (counted in one statement, so a
//     concurrent write cannot make a false report);
//   - "vecgen": a generation recorded for a namespace without memories.
//
// progress (if non-nil) gets the records walked (memories and vectors)
// and their total, every checkProgressEvery records and once at the end
// with done == total. The error is non-nil only when the walk itself
// failed.
func (s *Store) CheckProgress(fn func(store.Problem), progress func(done, total int64)) (store.CheckStats, error) {
	var st store.CheckStats
	report := func(p store.Problem) {
		st.Problems++
		if fn != nil {
			fn(p)
		}
	}
	var total, done int64
	err := s.call(context.Background(), "check namespaces", func(ctx context.Context) error {
		return s.checkNamespaces(ctx, &st, report, &total)
	})
	if err != nil {
		return st, err
	}
	step := func() {
		done++
		if progress != nil && done%checkProgressEvery == 0 {
			progress(done, max(total, done))
		}
	}
	afterNS, afterID := "", ""
	for {
		n := 0
		err := s.call(context.Background(), "check", func(ctx context.Context) error {
			n = 0
			rows, err := s.pool.Query(ctx, `SELECT ns, id, deleted, memory, vector FROM rerankd_memories
				WHERE (ns, id) > ($1, $2) ORDER BY ns, id LIMIT $3`, afterNS, afterID, walkPage)
			if err != nil {
				return err
			}
			var ns, id string
			var deleted bool
			var mem, vec []byte
			_, err = pgx.ForEachRow(rows, []any{&ns, &id, &deleted, &mem, &vec}, func() error {
				n++
				afterNS, afterID = ns, id
				checkRow(ns, id, deleted, mem, vec, &st, report, step)
				return nil
			})
			return err
		})
		if err != nil {
			return st, err
		}
		if n < walkPage {
			break
		}
	}
	if progress != nil {
		progress(done, done)
	}
	return st, nil
}

// checkNamespaces reports the namespace-level problems and counts the
// namespaces and the records to walk, in one statement.
func (s *Store) checkNamespaces(ctx context.Context, st *store.CheckStats, report func(store.Problem), total *int64) error {
	rows, err := s.pool.Query(ctx, `
		WITH counted AS (
			SELECT ns, count(*) FILTER (WHERE NOT deleted) AS rows_live,
				count(*) FILTER (WHERE NOT deleted AND vector IS NOT NULL) AS rows_vec
			FROM rerankd_memories GROUP BY ns)
		SELECT coalesce(n.ns, c.ns), coalesce(n.live, 0), coalesce(c.rows_live, 0), coalesce(c.rows_vec, 0),
			coalesce(n.vecgen_seq, 0), coalesce(n.vecgen_stamp, 0)
		FROM rerankd_namespaces n FULL JOIN counted c ON c.ns = n.ns
		ORDER BY 1`)
	if err != nil {
		return err
	}
	var ns string
	var live, rowsLive, rowsVec, vecSeq, vecStamp int64
	_, err = pgx.ForEachRow(rows, []any{&ns, &live, &rowsLive, &rowsVec, &vecSeq, &vecStamp}, func() error {
		*total += rowsLive + rowsVec
		if rowsLive > 0 {
			st.Namespaces++
		}
		if err := memory.ValidateNamespace(ns); err != nil {
			report(store.Problem{Namespace: ns, Kind: "namespace", Err: err})
		}
		if live != rowsLive {
			report(store.Problem{Namespace: ns, Kind: "namespace",
				Err: fmt.Errorf("%w: live count is %d, the namespace has %d memories", store.ErrCorrupt, live, rowsLive)})
		}
		if rowsLive == 0 && (vecSeq != 0 || vecStamp != 0) {
			report(store.Problem{Namespace: ns, Kind: "vecgen",
				Err: fmt.Errorf("%w: vector generation %v without memories", store.ErrCorrupt, vecGen(vecSeq, vecStamp))})
		}
		return nil
	})
	return err
}

// checkRow reports the problems of one row.
func checkRow(ns, id string, deleted bool, mem, vec []byte, st *store.CheckStats, report func(store.Problem), step func()) {
	if deleted {
		if mem != nil || vec != nil {
			report(store.Problem{Namespace: ns, ID: id, Kind: "orphan-vector",
				Err: fmt.Errorf("%w: deleted memory still holds its record or vector", store.ErrCorrupt)})
		}
		return
	}
	st.Memories++
	step()
	var err error
	if mem == nil {
		err = fmt.Errorf("store: memory %s/%s: %w: no memory record", ns, id, store.ErrCorrupt)
	} else {
		var m memory.Memory
		if m, err = store.UnmarshalMemory(mem, ns, id); err == nil {
			err = m.Validate()
		}
	}
	if err != nil {
		report(store.Problem{Namespace: ns, ID: id, Kind: "memory", Err: err})
	}
	if vec == nil {
		return
	}
	st.Vectors++
	step()
	v, err := decodeVector(vec, ns, id)
	if err == nil {
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				err = fmt.Errorf("store: vector %s/%s: %w: vector[%d] is %v", ns, id, store.ErrCorrupt, i, x)
				break
			}
		}
	}
	if err != nil {
		report(store.Problem{Namespace: ns, ID: id, Kind: "vector", Err: err})
	}
}
