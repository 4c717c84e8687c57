package store

import (
	"errors"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestVectorGen checks which writes move a namespace's generation: every
// change of its vectors does, in the same transaction; lexical-only
// writes and other namespaces' writes do not.
func TestVectorGen(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	gen := func(ns string) VectorGen {
		t.Helper()
		g, err := s.VectorGen(ns)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	steps := []struct {
		name  string
		write func() error
		moves bool
	}{
		{"lexical-only put", func() error { return s.Put(mem("a", "x"), nil) }, false},
		{"vector put", func() error { return s.Put(mem("a", "1"), vec(1, 4)) }, true},
		{"same vector again", func() error { return s.Put(mem("a", "1"), vec(1, 4)) }, true},
		{"other namespace", func() error { return s.Put(mem("b", "1"), vec(2, 4)) }, false},
		{"put without vector drops it", func() error { return s.Put(mem("a", "1"), nil) }, true},
		{"put without vector, none before", func() error { return s.Put(mem("a", "1"), nil) }, false},
		{"vector put 2", func() error { return s.Put(mem("a", "2"), vec(3, 4)) }, true},
		{"delete lexical-only", func() error { return s.Delete("a", "x") }, false},
		{"delete with vector", func() error { return s.Delete("a", "2") }, true},
	}
	prev := gen("a")
	if !prev.IsZero() {
		t.Fatalf("new namespace has generation %v", prev)
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		g := gen("a")
		if moved := g != prev; moved != st.moves {
			t.Fatalf("%s: generation %v → %v, want moved=%v", st.name, prev, g, st.moves)
		}
		if st.moves && (g.Seq != prev.Seq+1 || g.Stamp == 0) {
			t.Fatalf("%s: generation %v → %v", st.name, prev, g)
		}
		prev = g
	}
	all, err := s.VectorGens()
	if err != nil || all["a"] != prev || all["b"].IsZero() || len(all) != 2 {
		t.Fatalf("VectorGens = %v, %v", all, err)
	}
	// Deleting the last memory drops the generation with the namespace.
	if err := s.Delete("a", "1"); err != nil {
		t.Fatal(err)
	}
	if g := gen("a"); !g.IsZero() {
		t.Fatalf("deleted namespace keeps generation %v", g)
	}
	if _, err := s.BumpVectorGen("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bump of a missing namespace: %v", err)
	}
	b0 := gen("b")
	if g, err := s.BumpVectorGen("b"); err != nil || g == b0 || g != gen("b") {
		t.Fatalf("bump: %v, %v (was %v)", g, err, b0)
	}
}

func TestVectorGenDamagedRecord(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	if err := s.Put(mem("a", "1"), vec(1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVecGen).Put([]byte("a"), []byte("short"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VectorGen("a"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged generation: %v, want ErrCorrupt", err)
	}
	if all, err := s.VectorGens(); err != nil || len(all) != 0 {
		t.Fatalf("VectorGens with a damaged record = %v, %v", all, err)
	}
	var kinds []string
	if _, err := s.Check(func(p Problem) { kinds = append(kinds, p.Kind) }); err != nil || !slices.Equal(kinds, []string{"vecgen"}) {
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

func TestPutVectorsIf(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true, Dimension: 4})
	for _, id := range []string{"1", "2", "3"} {
		if err := s.Put(mem("a", id), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(mem("a", "4"), vec(4, 4)); err != nil {
		t.Fatal(err)
	}
	g0, _ := s.VectorGen("a")
	var seen []string
	written, err := s.PutVectorsIf("a", map[string][]float32{
		"1": vec(1, 4), "2": vec(2, 4), "4": vec(9, 4), "gone": vec(5, 4),
	}, func(cur Record) bool {
		seen = append(seen, cur.Memory.ID)
		return cur.Vector == nil && cur.Memory.Text == "text of "+cur.Memory.ID && cur.Memory.ID != "2"
	})
	if err != nil || !slices.Equal(written, []string{"1"}) || !slices.Equal(seen, []string{"1", "2", "4"}) {
		t.Fatalf("PutVectorsIf = %v, %v (keep saw %v)", written, err, seen)
	}
	if v, err := s.Vector("a", "1"); err != nil {
		t.Fatal(err)
	} else {
		equalVec(t, v, vec(1, 4))
	}
	if v, _ := s.Vector("a", "4"); v[0] != vec(4, 4)[0] {
		t.Fatal("a refused vector overwrote the stored one")
	}
	if g, _ := s.VectorGen("a"); g == g0 {
		t.Fatal("a vector write did not move the generation")
	}
	g1, _ := s.VectorGen("a")
	if written, err := s.PutVectorsIf("a", map[string][]float32{"3": vec(3, 4)}, func(Record) bool { return false }); err != nil || len(written) != 0 {
		t.Fatalf("all refused: %v, %v", written, err)
	}
	if g, _ := s.VectorGen("a"); g != g1 {
		t.Fatal("nothing written, yet the generation moved")
	}
	if _, err := s.PutVectorsIf("a", map[string][]float32{"3": vec(3, 5)}, func(Record) bool { return true }); !errors.Is(err, ErrInvalid) {
		t.Fatalf("wrong dimension: %v, want ErrInvalid", err)
	}
	if written, err := s.PutVectorsIf("nope", map[string][]float32{"3": vec(3, 4)}, func(Record) bool { return true }); err != nil || len(written) != 0 {
		t.Fatalf("missing namespace: %v, %v", written, err)
	}
}
