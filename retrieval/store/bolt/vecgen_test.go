package bolt

import (
	"errors"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/store"
)

func TestVectorGenDamagedRecord(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	if err := s.Put(mem("a", "1"), vec(1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketVecGen).Put([]byte("a"), []byte("short"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VectorGen("a"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("damaged generation: %v, want store.ErrCorrupt", err)
	}
	if all, err := s.VectorGens(); err != nil || len(all) != 0 {
		t.Fatalf("VectorGens with a damaged record = %v, %v", all, err)
	}
	var kinds []string
	if _, err := s.Check(func(p store.Problem) { kinds = append(kinds, p.Kind) }); err != nil || !slices.Equal(kinds, []string{"vecgen"}) {
		t.Fatalf("Check problems %v, %v", kinds, err)
	}
	// The next vector write replaces the damaged record.
	if err := s.Put(mem("a", "2"), vec(2, 4)); err != nil {
		t.Fatal(err)
	}
	if g, err := s.VectorGen("a"); err != nil || g.Seq != 1 {
		t.Fatalf("after rewrite: %v, %v", g, err)
	}
}

// TestPutVectorsIfKeepOrder: bbolt calls keep in ID byte order, whatever
// the order of the map (the contract, checked for every backend by
// storetest, only says which records keep sees).
func TestPutVectorsIfKeepOrder(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true, Dimension: 4})
	for _, id := range []string{"1", "2", "10", "B", "a"} {
		if err := s.Put(mem("a", id), nil); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	written, err := s.PutVectorsIf("a", map[string][]float32{
		"a": vec(1, 4), "2": vec(2, 4), "10": vec(3, 4), "B": vec(4, 4), "1": vec(5, 4), "gone": vec(6, 4),
	}, func(cur store.Record) bool {
		seen = append(seen, cur.Memory.ID)
		return cur.Memory.ID != "2"
	})
	if err != nil || !slices.Equal(seen, []string{"1", "10", "2", "B", "a"}) || !slices.Equal(written, []string{"1", "10", "B", "a"}) {
		t.Fatalf("PutVectorsIf = %v, %v; keep saw %v, want byte order", written, err, seen)
	}
}
