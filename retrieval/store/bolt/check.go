package bolt

import (
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Check walks every record in one read transaction, decoding and validating
// each, and calls fn (if non-nil) for every problem: undecodable or
// misplaced memory records, memories that no longer pass Validate, corrupt
// vector records, vectors without a memory, and invalid namespace names. It
// also runs bbolt's own page-level consistency check. The returned error is
// non-nil only if the walk itself failed; corruption is reported through fn
// and store.CheckStats.Problems.
func (s *Store) Check(fn func(store.Problem)) (store.CheckStats, error) {
	return s.CheckProgress(fn, nil)
}

// progressEvery is how many records pass between progress calls.
const progressEvery = 1024

// CheckProgress is Check that also calls progress (if non-nil) with the
// records walked so far and their total (memories and vectors, counted
// first from the buckets' own statistics), every progressEvery records
// and once at the end with done == total.
func (s *Store) CheckProgress(fn func(store.Problem), progress func(done, total int64)) (store.CheckStats, error) {
	var st store.CheckStats
	var done, total int64
	step := func() {
		done++
		if progress != nil && done%progressEvery == 0 {
			progress(done, max(total, done))
		}
	}
	report := func(p store.Problem) {
		st.Problems++
		if fn != nil {
			fn(p)
		}
	}
	err := s.view(func(tx *bbolt.Tx) error {
		for _, err := range checkPages(s.db.Path()) {
			report(store.Problem{Kind: "page", Err: err})
		}
		memTop, embTop := tx.Bucket(bucketMemories), tx.Bucket(bucketEmbeddings)
		if progress != nil {
			total = recordCount(memTop) + recordCount(embTop)
		}
		if err := memTop.ForEachBucket(func(nsKey []byte) error {
			ns := string(nsKey)
			st.Namespaces++
			if err := memory.ValidateNamespace(ns); err != nil {
				report(store.Problem{Namespace: ns, Kind: "namespace", Err: err})
			}
			return memTop.Bucket(nsKey).ForEach(func(k, v []byte) error {
				st.Memories++
				step()
				m, err := decodeMemoryAt(v, ns, string(k))
				if err == nil {
					err = m.Validate()
				}
				if err != nil {
					report(store.Problem{Namespace: ns, ID: string(k), Kind: "memory", Err: err})
				}
				return nil
			})
		}); err != nil {
			return err
		}
		if err := embTop.ForEachBucket(func(nsKey []byte) error {
			ns := string(nsKey)
			mb := memTop.Bucket(nsKey)
			return embTop.Bucket(nsKey).ForEach(func(k, v []byte) error {
				st.Vectors++
				step()
				if _, err := decodeVector(v); err != nil {
					report(store.Problem{Namespace: ns, ID: string(k), Kind: "vector", Err: store.RecordErr("vector", ns, string(k), err)})
				}
				if mb == nil || mb.Get(k) == nil {
					report(store.Problem{Namespace: ns, ID: string(k), Kind: "orphan-vector",
						Err: fmt.Errorf("%w: vector without memory", store.ErrCorrupt)})
				}
				return nil
			})
		}); err != nil {
			return err
		}
		// A damaged generation only costs a rebuild of the saved vector
		// index (it matches none), but it is damage all the same.
		if gens := tx.Bucket(bucketVecGen); gens != nil {
			return gens.ForEach(func(k, v []byte) error {
				if _, err := decodeVectorGen(v); err != nil {
					report(store.Problem{Namespace: string(k), Kind: "vecgen", Err: err})
				}
				return nil
			})
		}
		return nil
	})
	// A page bbolt trips over ends the walk; it is one more problem, and
	// salvage reads past it.
	var de *damageError
	if errors.As(err, &de) {
		report(store.Problem{Kind: "page", Err: err})
		err = nil
	}
	if progress != nil && err == nil {
		progress(done, done)
	}
	return st, err
}

// recordCount is the number of records in top's per-namespace buckets.
func recordCount(top *bbolt.Bucket) int64 {
	var n int64
	_ = top.ForEachBucket(func(k []byte) error {
		n += int64(top.Bucket(k).Stats().KeyN)
		return nil
	})
	return n
}
