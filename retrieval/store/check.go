package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// Problem is one defect found by Check.
type Problem struct {
	Namespace string
	ID        string // empty for namespace-level problems
	Kind      string // "memory", "vector", "orphan-vector", "namespace", "vecgen"
	Err       error
}

func (p Problem) String() string {
	return fmt.Sprintf("%s %s/%s: %v", p.Kind, p.Namespace, p.ID, p.Err)
}

// CheckStats summarises a Check run.
type CheckStats struct {
	Namespaces, Memories, Vectors, Problems int
}

// Check walks every record in one read transaction, decoding and validating
// each, and calls fn (if non-nil) for every problem: undecodable or
// misplaced memory records, memories that no longer pass Validate, corrupt
// vector records, vectors without a memory, and invalid namespace names. It
// also runs bbolt's own page-level consistency check. The returned error is
// non-nil only if the walk itself failed; corruption is reported through fn
// and CheckStats.Problems.
func (s *Store) Check(fn func(Problem)) (CheckStats, error) {
	var st CheckStats
	report := func(p Problem) {
		st.Problems++
		if fn != nil {
			fn(p)
		}
	}
	err := s.view(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			report(Problem{Kind: "page", Err: fmt.Errorf("%w: %w", ErrCorrupt, err)})
		}
		memTop, embTop := tx.Bucket(bucketMemories), tx.Bucket(bucketEmbeddings)
		if err := memTop.ForEachBucket(func(nsKey []byte) error {
			ns := string(nsKey)
			st.Namespaces++
			if err := memory.ValidateNamespace(ns); err != nil {
				report(Problem{Namespace: ns, Kind: "namespace", Err: err})
			}
			return memTop.Bucket(nsKey).ForEach(func(k, v []byte) error {
				st.Memories++
				m, err := decodeMemoryAt(v, ns, string(k))
				if err == nil {
					err = m.Validate()
				}
				if err != nil {
					report(Problem{Namespace: ns, ID: string(k), Kind: "memory", Err: err})
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
				if _, err := decodeVector(v); err != nil {
					report(Problem{Namespace: ns, ID: string(k), Kind: "vector", Err: recordErr("vector", ns, string(k), err)})
				}
				if mb == nil || mb.Get(k) == nil {
					report(Problem{Namespace: ns, ID: string(k), Kind: "orphan-vector",
						Err: fmt.Errorf("%w: vector without memory", ErrCorrupt)})
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
					report(Problem{Namespace: string(k), Kind: "vecgen", Err: err})
				}
				return nil
			})
		}
		return nil
	})
	return st, err
}
