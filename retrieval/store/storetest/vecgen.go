package storetest

import (
	"slices"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// testVectorGen checks which writes move a namespace's generation: every
// transaction that changes its vectors does, by one step with a new
// non-zero stamp; lexical-only writes, failed writes and other
// namespaces' writes do not.
func testVectorGen(t *testing.T, o Opener) {
	b := open(t, o, 4)
	keepNone := func(store.Record) bool { return false }
	keepAll := func(store.Record) bool { return true }
	steps := []struct {
		name  string
		write func() error
		moves bool
	}{
		{"lexical-only put", func() error { return b.Put(mem("a", "x"), nil) }, false},
		{"vector put", func() error { return b.Put(mem("a", "1"), vec(1, 4)) }, true},
		{"same vector again", func() error { return b.Put(mem("a", "1"), vec(1, 4)) }, true},
		{"other namespace", func() error { return b.Put(mem("b", "1"), vec(2, 4)) }, false},
		{"put without vector drops it", func() error { return b.Put(mem("a", "1"), nil) }, true},
		{"put without vector, none before", func() error { return b.Put(mem("a", "1"), nil) }, false},
		{"vector put 2", func() error { return b.Put(mem("a", "2"), vec(3, 4)) }, true},
		{"delete lexical-only", func() error { return b.Delete("a", "x") }, false},
		{"delete with vector", func() error { return b.Delete("a", "2") }, true},
		{"batch: two vectors in a, one in b", func() error {
			return b.PutBatch([]store.Item{{Memory: mem("a", "5"), Vector: vec(5, 4)}, {Memory: mem("b", "2"), Vector: vec(6, 4)}, {Memory: mem("a", "6"), Vector: vec(7, 4)}})
		}, true},
		{"batch: lexical-only", func() error {
			return b.PutBatch([]store.Item{{Memory: mem("a", "7")}, {Memory: mem("a", "8")}, {Memory: mem("b", "3"), Vector: vec(8, 4)}})
		}, false},
		{"batch: a vector dropped", func() error {
			return b.PutBatch([]store.Item{{Memory: mem("a", "9")}, {Memory: mem("a", "5")}})
		}, true},
		{"PutVectorsIf refused", func() error {
			_, err := b.PutVectorsIf("a", map[string][]float32{"7": vec(9, 4)}, keepNone)
			return err
		}, false},
		{"PutVectorsIf missing ID", func() error {
			_, err := b.PutVectorsIf("a", map[string][]float32{"missing": vec(9, 4)}, keepAll)
			return err
		}, false},
		{"PutVectorsIf written", func() error {
			_, err := b.PutVectorsIf("a", map[string][]float32{"7": vec(9, 4), "8": vec(10, 4)}, keepAll)
			return err
		}, true},
		{"BumpVectorGen", func() error { _, err := b.BumpVectorGen("a"); return err }, true},
		{"BumpVectorGen of b", func() error { _, err := b.BumpVectorGen("b"); return err }, false},
	}
	prev := gen(t, b, "a")
	if !prev.IsZero() {
		t.Fatalf("new namespace has generation %v", prev)
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		g := gen(t, b, "a")
		if moved := g != prev; moved != st.moves {
			t.Fatalf("%s: generation %v → %v, want moved=%v", st.name, prev, g, st.moves)
		}
		if st.moves && (g.Seq != prev.Seq+1 || g.Stamp == 0) {
			t.Fatalf("%s: generation %v → %v, want the next Seq and a non-zero stamp", st.name, prev, g)
		}
		prev = g
	}
	// Failed writes move nothing.
	failed := []struct {
		name  string
		write func() error
	}{
		{"invalid memory", func() error { m := mem("a", "1"); m.Text = ""; return b.Put(m, vec(1, 4)) }},
		{"wrong dimension", func() error { return b.Put(mem("a", "1"), vec(1, 5)) }},
		{"invalid batch", func() error {
			return b.PutBatch([]store.Item{{Memory: mem("a", "1"), Vector: vec(1, 4)}, {Memory: mem("a", "../2")}})
		}},
		{"invalid PutVectorsIf", func() error {
			_, err := b.PutVectorsIf("a", map[string][]float32{"1": vec(1, 4), "7": vec(1, 3)}, keepAll)
			return err
		}},
		{"delete of a missing memory", func() error { return b.Delete("a", "missing") }},
	}
	for _, f := range failed {
		if err := f.write(); err == nil {
			t.Fatalf("%s: no error", f.name)
		}
		if g := gen(t, b, "a"); g != prev {
			t.Fatalf("%s failed, yet the generation moved %v → %v", f.name, prev, g)
		}
	}
	all, err := b.VectorGens()
	if err != nil || all["a"] != prev || all["b"].IsZero() || all["b"] != gen(t, b, "b") || len(all) != 2 {
		t.Fatalf("VectorGens = %v, %v", all, err)
	}
	// Deleting the last memory drops the generation with the namespace.
	var left []string
	if err := b.List("a", func(m memory.Memory) error { left = append(left, m.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, id := range left {
		if err := b.Delete("a", id); err != nil {
			t.Fatal(err)
		}
		if g := gen(t, b, "a"); (i == len(left)-1) != g.IsZero() {
			t.Fatalf("after deleting %d of %d memories the generation is %v", i+1, len(left), g)
		}
	}
	if _, err := b.BumpVectorGen("a"); !wantErr(t, "bump of a missing namespace", err, store.ErrNotFound) {
		return
	}
	if all, err := b.VectorGens(); err != nil || len(all) != 1 || all["b"].IsZero() {
		t.Fatalf("VectorGens after deleting a = %v, %v", all, err)
	}
	b0 := gen(t, b, "b")
	if g, err := b.BumpVectorGen("b"); err != nil || g == b0 || g != gen(t, b, "b") || g.Seq != b0.Seq+1 {
		t.Fatalf("bump: %v, %v (was %v)", g, err, b0)
	}
	if _, err := b.VectorGen("../b"); !wantErr(t, "VectorGen of an invalid namespace", err, store.ErrInvalid) {
		return
	}
}

// testVectorGenRecreated: a namespace deleted and created again starts
// from zero, and its first vector draws a new stamp, so an index saved
// before the delete never matches it.
func testVectorGenRecreated(t *testing.T, o Opener) {
	b := open(t, o, 0)
	var gens []store.VectorGen
	for round := range 5 {
		put(t, b, mem("a", "1"), nil)
		if g := gen(t, b, "a"); !g.IsZero() {
			t.Fatalf("round %d: re-created namespace without vectors has generation %v", round, g)
		}
		put(t, b, mem("a", "2"), vec(round, 2))
		g := gen(t, b, "a")
		if g.Seq != 1 || g.Stamp == 0 {
			t.Fatalf("round %d: first vector of a re-created namespace: generation %v, want Seq 1 and a stamp", round, g)
		}
		if slices.Contains(gens, g) {
			t.Fatalf("round %d: generation %v repeats one of %v", round, g, gens)
		}
		gens = append(gens, g)
		for _, id := range []string{"1", "2"} {
			if err := b.Delete("a", id); err != nil {
				t.Fatal(err)
			}
		}
		if g := gen(t, b, "a"); !g.IsZero() {
			t.Fatalf("round %d: deleted namespace keeps generation %v", round, g)
		}
		if all, err := b.VectorGens(); err != nil || len(all) != 0 {
			t.Fatalf("round %d: VectorGens = %v, %v after deleting all", round, all, err)
		}
	}
}

// testBumpVectorGen: BumpVectorGen gives an existing namespace (with or
// without vectors) a new generation and changes nothing else.
func testBumpVectorGen(t *testing.T, o Opener) {
	b := open(t, o, 0)
	put(t, b, mem("lex", "1"), nil)
	put(t, b, mem("vec", "1"), vec(1, 2))
	if g := gen(t, b, "lex"); !g.IsZero() {
		t.Fatalf("lexical-only namespace has generation %v", g)
	}
	before := snapshot(t, b)
	vecGen := gen(t, b, "vec")
	g1, err := b.BumpVectorGen("lex")
	if err != nil || g1.IsZero() || g1.Stamp == 0 || g1 != gen(t, b, "lex") {
		t.Fatalf("BumpVectorGen(lex) = %v, %v; VectorGen %v", g1, err, gen(t, b, "lex"))
	}
	g2, err := b.BumpVectorGen("lex")
	if err != nil || g2.Seq != g1.Seq+1 || g2 == g1 || g2 != gen(t, b, "lex") {
		t.Fatalf("second BumpVectorGen(lex) = %v, %v after %v", g2, err, g1)
	}
	if all, err := b.VectorGens(); err != nil || all["lex"] != g2 || all["vec"] != vecGen || len(all) != 2 {
		t.Fatalf("VectorGens = %v, %v", all, err)
	}
	after := snapshot(t, b)
	if after.records != before.records || after.namespaces != before.namespaces {
		t.Fatal("BumpVectorGen changed records or namespaces")
	}
	for _, tc := range []struct {
		ns   string
		want error
	}{{"missing", store.ErrNotFound}, {"../lex", store.ErrInvalid}, {"", store.ErrInvalid}} {
		_, err := b.BumpVectorGen(tc.ns)
		wantErr(t, "BumpVectorGen("+tc.ns+")", err, tc.want)
	}
	if nss := namespaces(t, b); !slices.Equal(nss, []string{"lex", "vec"}) {
		t.Fatalf("BumpVectorGen of a missing namespace created it: %v", nss)
	}
}
