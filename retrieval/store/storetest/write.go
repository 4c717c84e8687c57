package storetest

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// testPutBatch: a batch is written all or nothing, and a later duplicate
// (namespace, ID) wins.
func testPutBatch(t *testing.T, o Opener) {
	t.Run("all valid", func(t *testing.T) {
		b := open(t, o, 4)
		items := []store.Item{{Memory: mem("n", "1"), Vector: vec(1, 4)}, {Memory: mem("n", "2")}, {Memory: mem("m", "3"), Vector: vec(3, 4)}}
		putBatch(t, b, items)
		for _, it := range items {
			got, err := b.Get(it.Memory.Namespace, it.Memory.ID)
			if err != nil {
				t.Fatalf("Get after batch: %v", err)
			}
			equalMem(t, got, it.Memory)
			v, err := b.Vector(it.Memory.Namespace, it.Memory.ID)
			if it.Vector == nil {
				wantErr(t, "Vector of an item without one", err, store.ErrNotFound)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			equalVec(t, v, it.Vector)
		}
		if nss := namespaces(t, b); !slices.Equal(nss, []string{"m", "n"}) {
			t.Fatalf("Namespaces = %v", nss)
		}
	})
	t.Run("empty", func(t *testing.T) {
		b := open(t, o, 4)
		put(t, b, mem("n", "1"), vec(1, 4))
		before := snapshot(t, b)
		for _, items := range [][]store.Item{nil, {}} {
			if err := b.PutBatch(items); err != nil {
				t.Fatalf("PutBatch(%#v) = %v", items, err)
			}
		}
		unchanged(t, b, before, "an empty batch")
	})
	t.Run("later duplicate wins", func(t *testing.T) {
		text := func(id, s string) memory.Memory { m := mem("n", id); m.Text = s; return m }
		cases := []struct {
			name     string
			existing []float32 // stored before the batch (nil: the memory is new)
			items    []store.Item
			wantText string
			wantVec  []float32
		}{
			{"vector then none", nil, []store.Item{{Memory: text("1", "A"), Vector: vec(1, 4)}, {Memory: text("1", "B"), Vector: nil}}, "B", nil},
			{"none then vector", nil, []store.Item{{Memory: text("1", "A"), Vector: nil}, {Memory: text("1", "B"), Vector: vec(2, 4)}}, "B", vec(2, 4)},
			{"vector then vector", nil, []store.Item{{Memory: text("1", "A"), Vector: vec(1, 4)}, {Memory: text("1", "B"), Vector: vec(2, 4)}}, "B", vec(2, 4)},
			{"over a stored vector, vector then none", vec(9, 4), []store.Item{{Memory: text("1", "A"), Vector: vec(1, 4)}, {Memory: text("1", "B"), Vector: nil}}, "B", nil},
			{"three times", vec(9, 4), []store.Item{{Memory: text("1", "A"), Vector: nil}, {Memory: text("1", "B"), Vector: vec(2, 4)}, {Memory: text("1", "C"), Vector: vec(3, 4)}}, "C", vec(3, 4)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				b := open(t, o, 4)
				if tc.existing != nil {
					put(t, b, text("1", "before"), tc.existing)
				}
				putBatch(t, b, tc.items)
				got, err := b.Get("n", "1")
				if err != nil || got.Text != tc.wantText {
					t.Fatalf("Get = %q, %v; want %q", got.Text, err, tc.wantText)
				}
				v, err := b.Vector("n", "1")
				if tc.wantVec == nil {
					wantErr(t, "Vector", err, store.ErrNotFound)
				} else if err != nil || !sameVec(v, tc.wantVec) {
					t.Fatalf("Vector = %v, %v; want %v", v, err, tc.wantVec)
				}
				if n := count(t, b, "n"); n != 1 {
					t.Fatalf("Count = %d, want 1", n)
				}
			})
		}
	})
	t.Run("invalid item writes nothing", func(t *testing.T) {
		b := open(t, o, 4)
		before := mem("n", "1")
		before.Text = "before"
		put(t, b, before, vec(7, 4))
		put(t, b, mem("m", "3"), nil)
		state := snapshot(t, b)
		bad := func(f func(*store.Item)) store.Item {
			it := store.Item{Memory: mem("n", "bad"), Vector: vec(2, 4)}
			f(&it)
			return it
		}
		badVec := func(i int, x float32) store.Item {
			v := vec(1, 4)
			v[i] = x
			return store.Item{Memory: mem("n", "2"), Vector: v}
		}
		tooMany := memory.Metadata{}
		for i := range memory.MaxMetadataKeys + 1 {
			tooMany[strings.Repeat("k", i+1)] = memory.String("v")
		}
		cases := []struct {
			name string
			bad  store.Item
		}{
			{"invalid memory last", bad(func(it *store.Item) { it.Memory.Text = "" })},
			{"invalid namespace", bad(func(it *store.Item) { it.Memory.Namespace = "../etc" })},
			{"invalid id", bad(func(it *store.Item) { it.Memory.ID = "a/b" })},
			{"NaN vector", badVec(2, float32(math.NaN()))},
			{"+Inf vector", badVec(0, float32(math.Inf(1)))},
			{"-Inf vector", badVec(3, float32(math.Inf(-1)))},
			{"wrong dimension", bad(func(it *store.Item) { it.Vector = vec(1, 5) })},
			{"empty vector", bad(func(it *store.Item) { it.Vector = []float32{} })},
			{"text not UTF-8", bad(func(it *store.Item) { it.Memory.Text = "ok \xff" })},
			{"source with NUL", bad(func(it *store.Item) { it.Memory.Source = "a\x00b" })},
			{"too many metadata keys", bad(func(it *store.Item) { it.Memory.Metadata = tooMany })},
			{"schema version from the future", bad(func(it *store.Item) { it.Memory.SchemaVersion = memory.CurrentSchema + 1 })},
		}
		for _, tc := range cases {
			// The bad item first, in the middle and last, among items
			// that overwrite a stored memory and create namespaces.
			for pos := range 3 {
				items := []store.Item{
					{Memory: mem("n", "1"), Vector: vec(1, 4)},
					{Memory: mem("new", "x"), Vector: vec(2, 4)},
					{Memory: mem("m", "3"), Vector: vec(3, 4)},
				}
				items = slices.Insert(items, []int{0, 2, 3}[pos], tc.bad)
				if err := b.PutBatch(items); wantErr(t, tc.name+": PutBatch", err, store.ErrInvalid) {
					unchanged(t, b, state, "a failed batch ("+tc.name+")")
				}
			}
			if err := b.Put(tc.bad.Memory, tc.bad.Vector); wantErr(t, tc.name+": Put", err, store.ErrInvalid) {
				unchanged(t, b, state, "a failed Put ("+tc.name+")")
			}
		}
	})
}

// testDelete: Delete removes the memory and its vector, ErrNotFound when
// absent; deleting a namespace's last memory removes the namespace and its
// vector generation.
func testDelete(t *testing.T, o Opener) {
	b := open(t, o, 0)
	put(t, b, mem("ns", "a"), vec(1, 3))
	put(t, b, mem("ns", "b"), vec(2, 3))
	put(t, b, mem("ns", "c"), nil)
	put(t, b, mem("other", "z"), vec(3, 3))
	steps := []struct {
		ns, id  string
		wantErr error
		left    []string // namespaces left after the step
	}{
		{"ns", "a", nil, []string{"ns", "other"}},
		{"ns", "a", store.ErrNotFound, []string{"ns", "other"}},
		{"other", "b", store.ErrNotFound, []string{"ns", "other"}},
		{"nope", "a", store.ErrNotFound, []string{"ns", "other"}},
		{"ns", "../b", store.ErrInvalid, []string{"ns", "other"}},
		{"../ns", "b", store.ErrInvalid, []string{"ns", "other"}},
		{"ns", "c", nil, []string{"ns", "other"}},
		{"ns", "b", nil, []string{"other"}},
		{"ns", "b", store.ErrNotFound, []string{"other"}},
		{"other", "z", nil, nil},
	}
	for _, st := range steps {
		nBefore := 0
		if st.wantErr == nil {
			nBefore = count(t, b, st.ns)
		}
		err := b.Delete(st.ns, st.id)
		if !wantErr(t, "Delete("+st.ns+", "+st.id+")", err, st.wantErr) {
			t.FailNow()
		}
		if err == nil {
			if _, err := b.Get(st.ns, st.id); !wantErr(t, "memory survived delete: Get", err, store.ErrNotFound) {
				t.FailNow()
			}
			if _, err := b.Vector(st.ns, st.id); !wantErr(t, "vector survived delete: Vector", err, store.ErrNotFound) {
				t.FailNow()
			}
			if recs, err := b.GetMany(st.ns, []string{st.id}, true); err != nil || len(recs) != 0 {
				t.Fatalf("GetMany after delete = %v, %v", ids(recs), err)
			}
			if n := count(t, b, st.ns); n != nBefore-1 {
				t.Fatalf("Count(%s) = %d after delete, want %d", st.ns, n, nBefore-1)
			}
		}
		if nss := namespaces(t, b); !slices.Equal(nss, st.left) {
			t.Fatalf("after Delete(%s, %s): Namespaces = %v, want %v", st.ns, st.id, nss, st.left)
		}
	}
	// The deleted namespaces are gone from every view.
	for _, ns := range []string{"ns", "other"} {
		if g := gen(t, b, ns); !g.IsZero() {
			t.Errorf("deleted namespace %s keeps generation %v", ns, g)
		}
		if left := listIDs(t, b, ns); len(left) != 0 {
			t.Errorf("List(%s) = %v after deleting all", ns, left)
		}
		if recs, next, err := b.Page(ns, "", 10, true); err != nil || len(recs) != 0 || next != "" {
			t.Errorf("Page(%s) = %v, %q, %v after deleting all", ns, ids(recs), next, err)
		}
	}
	if gens, err := b.VectorGens(); err != nil || len(gens) != 0 {
		t.Errorf("VectorGens = %v, %v after deleting all", gens, err)
	}
	if _, err := b.BumpVectorGen("ns"); !wantErr(t, "BumpVectorGen of a deleted namespace", err, store.ErrNotFound) {
		return
	}
	if st, err := b.CheckProgress(nil, nil); err != nil || st != (store.CheckStats{}) {
		t.Fatalf("CheckProgress after deleting all = %+v, %v", st, err)
	}
}

// testPutVectorsIf: the back-fill's compare-and-set.
func testPutVectorsIf(t *testing.T, o Opener) {
	b := open(t, o, 4)
	for _, id := range []string{"1", "2", "3", "10"} {
		put(t, b, mem("a", id), nil)
	}
	put(t, b, mem("a", "4"), vec(4, 4))
	put(t, b, mem("b", "1"), nil)
	g0 := gen(t, b, "a")
	gb := gen(t, b, "b")
	var seen []string
	written, err := b.PutVectorsIf("a", map[string][]float32{
		"1": vec(1, 4), "2": vec(2, 4), "3": vec(3, 4), "10": vec(10, 4), "4": vec(9, 4), "gone": vec(5, 4),
	}, func(cur store.Record) bool {
		seen = append(seen, cur.Memory.ID)
		if d := diffMemory(cur.Memory, mem("a", cur.Memory.ID)); d != "" {
			t.Errorf("keep saw %s: %s", cur.Memory.ID, d)
		}
		if cur.Memory.ID == "4" && !sameVec(cur.Vector, vec(4, 4)) {
			t.Errorf("keep saw 4 with vector %v, want the stored one", cur.Vector)
		}
		return cur.Vector == nil && cur.Memory.Text == "text of "+cur.Memory.ID && cur.Memory.ID != "2"
	})
	slices.Sort(seen)
	if err != nil || !slices.Equal(written, []string{"1", "10", "3"}) || !slices.Equal(seen, []string{"1", "10", "2", "3", "4"}) {
		t.Fatalf("PutVectorsIf = %v, %v (keep saw %v); want [1 10 3] sorted, keep seeing every existing ID", written, err, seen)
	}
	for id, want := range map[string][]float32{"1": vec(1, 4), "10": vec(10, 4), "3": vec(3, 4), "4": vec(4, 4)} {
		if v, err := b.Vector("a", id); err != nil || !sameVec(v, want) {
			t.Errorf("Vector a/%s = %v, %v; want %v", id, v, err, want)
		}
	}
	if _, err := b.Vector("a", "2"); !wantErr(t, "a refused vector was written: Vector a/2", err, store.ErrNotFound) {
		return
	}
	if _, err := b.Get("a", "gone"); !wantErr(t, "PutVectorsIf created a memory: Get a/gone", err, store.ErrNotFound) {
		return
	}
	if n := count(t, b, "a"); n != 5 {
		t.Fatalf("Count(a) = %d, want 5", n)
	}
	if _, err := b.Vector("b", "1"); !wantErr(t, "PutVectorsIf on a wrote b/1: Vector", err, store.ErrNotFound) {
		return
	}
	g1 := gen(t, b, "a")
	if g1.Seq != g0.Seq+1 || g1.Stamp == 0 || g1 == g0 {
		t.Fatalf("one PutVectorsIf moved the generation %v → %v, want one step", g0, g1)
	}
	if g := gen(t, b, "b"); g != gb {
		t.Fatalf("PutVectorsIf on a moved b's generation %v → %v", gb, g)
	}

	before := snapshot(t, b)
	noop := []struct {
		name string
		ns   string
		vecs map[string][]float32
		keep func(store.Record) bool
	}{
		{"all refused", "a", map[string][]float32{"2": vec(2, 4)}, func(store.Record) bool { return false }},
		{"only missing IDs", "a", map[string][]float32{"gone": vec(2, 4), "gone2": vec(3, 4)}, func(store.Record) bool { return true }},
		{"no vectors", "a", map[string][]float32{}, func(store.Record) bool { return true }},
		{"missing namespace", "nope", map[string][]float32{"1": vec(3, 4)}, func(store.Record) bool { return true }},
	}
	for _, tc := range noop {
		if written, err := b.PutVectorsIf(tc.ns, tc.vecs, tc.keep); err != nil || len(written) != 0 {
			t.Errorf("%s: PutVectorsIf = %v, %v; want nothing written", tc.name, written, err)
		}
		unchanged(t, b, before, "PutVectorsIf writing nothing ("+tc.name+")")
	}
	invalid := []struct {
		name string
		ns   string
		vecs map[string][]float32
	}{
		{"wrong dimension", "a", map[string][]float32{"2": vec(2, 4), "4": vec(3, 5)}},
		{"empty vector", "a", map[string][]float32{"2": vec(2, 4), "4": {}}},
		{"invalid id", "a", map[string][]float32{"2": vec(2, 4), "../4": vec(3, 4)}},
		{"invalid namespace", "../a", map[string][]float32{"2": vec(2, 4)}},
	}
	for _, tc := range invalid {
		_, err := b.PutVectorsIf(tc.ns, tc.vecs, func(store.Record) bool { return true })
		if wantErr(t, tc.name+": PutVectorsIf", err, store.ErrInvalid) {
			unchanged(t, b, before, "a failed PutVectorsIf ("+tc.name+")")
		}
	}
	// keep decides, not the presence of a vector: an accepted overwrite is
	// written and moves the generation.
	if written, err := b.PutVectorsIf("a", map[string][]float32{"4": vec(44, 4)}, func(store.Record) bool { return true }); err != nil || !slices.Equal(written, []string{"4"}) {
		t.Fatalf("accepted overwrite: %v, %v", written, err)
	}
	if v, err := b.Vector("a", "4"); err != nil || !sameVec(v, vec(44, 4)) {
		t.Fatalf("Vector a/4 = %v, %v after an accepted overwrite", v, err)
	}
	if g := gen(t, b, "a"); g.Seq != g1.Seq+1 || g == g1 {
		t.Fatalf("accepted overwrite moved the generation %v → %v, want one step", g1, g)
	}
}
