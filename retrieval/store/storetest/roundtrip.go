package storetest

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// testRoundTrip: what Put stores, every read method returns.
func testRoundTrip(t *testing.T, o Opener) {
	b := open(t, o, 0)
	type roundTrip struct {
		name string
		m    memory.Memory
		v    []float32
	}
	cases := []roundTrip{
		{"with vector", mem("ns1", "a"), vec(1, 8)},
		{"without vector", mem("ns1", "b"), nil},
		{"unicode text no metadata", memory.Memory{ID: "c", Namespace: "ns:2", Text: "日本語 ✓", Time: time.Now()}, vec(2, 3)},
		{"dim 1", mem("ns1", "d"), []float32{-0.5}},
		{"extreme floats", mem("ns1", "e"), []float32{
			math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
			float32(math.Copysign(0, -1)), 0, 1.17549435e-38, 0x1p-140, 1, -1, 1.0000001, 3.4028233e38,
		}},
	}
	for _, tc := range cases {
		put(t, b, tc.m, tc.v)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, id := tc.m.Namespace, tc.m.ID
			got, err := b.Get(ns, id)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			equalMem(t, got, tc.m)
			gv, err := b.Vector(ns, id)
			if tc.v == nil {
				wantErr(t, "Vector of a memory without one", err, store.ErrNotFound)
			} else {
				if err != nil {
					t.Fatalf("Vector: %v", err)
				}
				equalVec(t, gv, tc.v)
			}
			for _, withVectors := range []bool{true, false} {
				recs, err := b.GetMany(ns, []string{id}, withVectors)
				if err != nil || len(recs) != 1 {
					t.Fatalf("GetMany(%v) = %d records, %v", withVectors, len(recs), err)
				}
				equalMem(t, recs[0].Memory, tc.m)
				want := tc.v
				if !withVectors {
					want = nil
				}
				equalVec(t, recs[0].Vector, want)
			}
			recs := pageAll(t, b, ns, store.MaxPage, true)
			i := slices.IndexFunc(recs, func(r store.Record) bool { return r.Memory.ID == id })
			if i < 0 {
				t.Fatalf("Page of %s lacks %s: %v", ns, id, ids(recs))
			}
			equalMem(t, recs[i].Memory, tc.m)
			equalVec(t, recs[i].Vector, tc.v)
			found := false
			if err := b.List(ns, func(m memory.Memory) error {
				if m.ID == id {
					found = true
					equalMem(t, m, tc.m)
				}
				return nil
			}); err != nil || !found {
				t.Fatalf("List: found %v, %v", found, err)
			}
		})
	}
	if n := count(t, b, "ns1"); n != 4 {
		t.Errorf("Count(ns1) = %d, want 4", n)
	}
	if n := count(t, b, "ns:2"); n != 1 {
		t.Errorf("Count(ns:2) = %d, want 1", n)
	}
	if nss := namespaces(t, b); !slices.Equal(nss, []string{"ns1", "ns:2"}) {
		t.Errorf("Namespaces = %q, want [ns1 ns:2]", nss)
	}
	// ForEach: every record with its vector, namespaces sorted, IDs in
	// byte order; progress after every 2 records and once at the end.
	var got []string
	var progress [][2]int
	err := b.ForEach(func(r store.Record) error {
		got = append(got, r.Memory.Namespace+"/"+r.Memory.ID)
		i := slices.IndexFunc(cases, func(c roundTrip) bool {
			return c.m.Namespace == r.Memory.Namespace && c.m.ID == r.Memory.ID
		})
		if i < 0 {
			t.Fatalf("ForEach: unknown record %s/%s", r.Memory.Namespace, r.Memory.ID)
		}
		equalMem(t, r.Memory, cases[i].m)
		equalVec(t, r.Vector, cases[i].v)
		return nil
	}, store.WithProgress(2, func(done, total int) { progress = append(progress, [2]int{done, total}) }))
	if err != nil {
		t.Fatalf("ForEach: %v", err)
	}
	if want := []string{"ns1/a", "ns1/b", "ns1/d", "ns1/e", "ns:2/c"}; !slices.Equal(got, want) {
		t.Errorf("ForEach order %q, want %q", got, want)
	}
	if want := [][2]int{{2, 5}, {4, 5}, {5, 5}}; !slices.Equal(progress, want) {
		t.Errorf("ForEach progress %v, want %v", progress, want)
	}
}

// fieldCases are memories whose fields a backend could easily change on
// the way to its storage and back.
func fieldCases() []memory.Memory {
	m := func(id string, f func(*memory.Memory)) memory.Memory {
		x := mem("fields", id)
		f(&x)
		return x
	}
	many := memory.Metadata{}
	for i := range memory.MaxMetadataKeys {
		many[strings.Repeat("k", i+1)] = memory.String(strings.Repeat("v", i))
	}
	return []memory.Memory{
		m("time-ns-offset", func(x *memory.Memory) {
			x.Time = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("IST", 5*3600+30*60))
		}),
		m("time-negative-offset", func(x *memory.Memory) {
			x.Time = time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -3*3600))
		}),
		m("time-extreme-offsets", func(x *memory.Memory) {
			x.Time = time.Date(2001, 2, 3, 4, 5, 6, 1, time.FixedZone("", 14*3600))
		}),
		m("time-minus-12", func(x *memory.Memory) {
			x.Time = time.Date(2001, 2, 3, 4, 5, 6, 999, time.FixedZone("", -12*3600))
		}),
		m("time-far-future", func(x *memory.Memory) {
			x.Time = time.Date(2400, 1, 1, 0, 0, 0, 1, time.UTC)
		}),
		m("time-zero", func(x *memory.Memory) { x.Time = time.Time{} }),
		m("time-monotonic", func(x *memory.Memory) { x.Time = time.Now() }),
		m("text-nul", func(x *memory.Memory) { x.Text = "nul\x00in the\x00middle\x00" }),
		m("text-only-nul", func(x *memory.Memory) { x.Text = "\x00" }),
		m("text-emoji", func(x *memory.Memory) { x.Text = "👩‍👩‍👧‍👦 🇯🇵 🧑🏽‍💻 😀 𝄞" }),
		m("text-odd-but-valid", func(x *memory.Memory) {
			x.Text = "\uFFFD \uFEFF \uFFFE \uFFFF \U0010FFFF \u2028\u2029 \u200b \u00a0 \U000E0001"
		}),
		m("text-nfc", func(x *memory.Memory) { x.Text = "caf\u00e9 \u00c5" }),
		m("text-nfd", func(x *memory.Memory) { x.Text = "cafe\u0301 A\u030a" }),
		m("text-escapes", func(x *memory.Memory) {
			x.Text = `\u0000 is not a NUL; "quotes" 'single' ; DROP TABLE memories; -- %s $1 ? {{.}} \x00 \\`
		}),
		m("text-whitespace", func(x *memory.Memory) { x.Text = "  leading and trailing  \n\r\n\t" }),
		m("text-controls", func(x *memory.Memory) { x.Text = "\x01\x07\x1b[31m\x1f\x7f\u0085" }),
		m("text-max", func(x *memory.Memory) { x.Text = strings.Repeat("é", memory.MaxTextLen/2) }),
		m("source-empty", func(x *memory.Memory) { x.Source = "" }),
		m("source-unicode", func(x *memory.Memory) { x.Source = "ソース/✓\ttab" }),
		m("source-max", func(x *memory.Memory) { x.Source = strings.Repeat("s", memory.MaxSourceLen) }),
		m("metadata-nil", func(x *memory.Memory) { x.Metadata = nil }),
		m("metadata-empty", func(x *memory.Memory) { x.Metadata = memory.Strings(map[string]string{}) }),
		m("metadata-tricky", func(x *memory.Memory) {
			x.Metadata = memory.Strings(map[string]string{
				"empty": "", "K": "upper", "k": "lower", "ключ": "значение", "nul\x00key": "a\x00b",
				"quote\"": `{"json": [1, 2]}`, "max": strings.Repeat("v", memory.MaxMetadataValLen),
			})
		}),
		m("metadata-typed", func(x *memory.Memory) {
			x.Metadata = memory.Metadata{
				"s": memory.String("5"), "n": memory.Number(5), "neg": memory.Number(-0.125),
				"big": memory.Number(1 << 53), "tiny": memory.Number(5e-324), "max": memory.Number(math.MaxFloat64),
				"t": memory.Bool(true), "f": memory.Bool(false), "zero": memory.Number(0), "empty": memory.String(""),
			}
		}),
		m("metadata-most-keys", func(x *memory.Memory) { x.Metadata = many }),
		m("schema-explicit", func(x *memory.Memory) { x.SchemaVersion = memory.CurrentSchema }),
		m("schema-zero", func(x *memory.Memory) { x.SchemaVersion = 0 }),
	}
}

// testFields: every field of a memory reads back exactly as it was put,
// through every read method (and after reopening, when the backend can).
func testFields(t *testing.T, o Opener) {
	b := open(t, o, 0)
	cases := fieldCases()
	for i, m := range cases {
		if err := m.Validate(); err != nil {
			t.Fatalf("case %s is not a valid memory: %v", m.ID, err)
		}
		put(t, b, m, vec(i, 2))
	}
	// The same memory's neighbours must not change it: a batch too.
	batch := make([]store.Item, len(cases))
	for i, m := range cases {
		m.Namespace = "fields-batch"
		batch[i] = store.Item{Memory: m}
	}
	putBatch(t, b, batch)
	check := func(t *testing.T, b store.Backend) {
		for _, ns := range []string{"fields", "fields-batch"} {
			byID := map[string]memory.Memory{}
			for _, m := range cases {
				m.Namespace = ns
				byID[m.ID] = m
			}
			var all []string
			for id := range byID {
				all = append(all, id)
			}
			slices.Sort(all)
			for _, id := range all {
				got, err := b.Get(ns, id)
				if err != nil {
					t.Errorf("Get %s/%s: %v", ns, id, err)
					continue
				}
				if d := diffMemory(got, byID[id]); d != "" {
					t.Errorf("Get %s/%s: %s", ns, id, d)
				}
			}
			recs, err := b.GetMany(ns, all, false)
			if err != nil || len(recs) != len(all) {
				t.Fatalf("GetMany %s: %d records, %v", ns, len(recs), err)
			}
			for _, r := range recs {
				if d := diffMemory(r.Memory, byID[r.Memory.ID]); d != "" {
					t.Errorf("GetMany %s/%s: %s", ns, r.Memory.ID, d)
				}
			}
			for _, r := range pageAll(t, b, ns, 3, false) {
				if d := diffMemory(r.Memory, byID[r.Memory.ID]); d != "" {
					t.Errorf("Page %s/%s: %s", ns, r.Memory.ID, d)
				}
			}
			n := 0
			if err := b.List(ns, func(m memory.Memory) error {
				n++
				if d := diffMemory(m, byID[m.ID]); d != "" {
					t.Errorf("List %s/%s: %s", ns, m.ID, d)
				}
				return nil
			}); err != nil || n != len(all) {
				t.Fatalf("List %s: %d memories, %v", ns, n, err)
			}
		}
		n := 0
		if err := b.ForEach(func(r store.Record) error {
			n++
			i := slices.IndexFunc(cases, func(m memory.Memory) bool { return m.ID == r.Memory.ID })
			want := cases[i]
			want.Namespace = r.Memory.Namespace
			if d := diffMemory(r.Memory, want); d != "" {
				t.Errorf("ForEach %s/%s: %s", r.Memory.Namespace, r.Memory.ID, d)
			}
			return nil
		}); err != nil || n != 2*len(cases) {
			t.Fatalf("ForEach: %d records, %v", n, err)
		}
	}
	check(t, b)
	if o.Reopen != nil {
		t.Run("after reopen", func(t *testing.T) { check(t, o.Reopen(t, b)) })
	}
}

// testVectorsAreCopies: the backend keeps no reference to a vector passed
// to it, and hands out vectors the caller may change.
func testVectorsAreCopies(t *testing.T, o Opener) {
	b := open(t, o, 0)
	in := vec(1, 4)
	put(t, b, mem("ns", "a"), in)
	putBatch(t, b, []store.Item{{Memory: mem("ns", "b"), Vector: in}})
	in[0] = 12345
	for _, id := range []string{"a", "b"} {
		v, err := b.Vector("ns", id)
		if err != nil {
			t.Fatal(err)
		}
		equalVec(t, v, vec(1, 4))
		v[1] = 54321
		recs, err := b.GetMany("ns", []string{id}, true)
		if err != nil || len(recs) != 1 {
			t.Fatalf("GetMany: %v, %v", recs, err)
		}
		equalVec(t, recs[0].Vector, vec(1, 4))
		recs[0].Vector[2] = 999
		if v, err := b.Vector("ns", id); err != nil || !sameVec(v, vec(1, 4)) {
			t.Fatalf("stored vector of %s changed through a returned slice: %v, %v", id, v, err)
		}
	}
}

// testPutReplaces: a Put over an existing memory leaves nothing of the old
// one (fields it no longer has, its vector) and does not add a memory.
func testPutReplaces(t *testing.T, o Opener) {
	b := open(t, o, 0)
	old := mem("ns", "a")
	old.Metadata = memory.Strings(map[string]string{"kind": "fact", "gone": "soon"})
	put(t, b, old, vec(1, 4))
	repl := memory.Memory{ID: "a", Namespace: "ns", Text: "new text", Time: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)}
	put(t, b, repl, vec(2, 4))
	got, err := b.Get("ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	equalMem(t, got, repl)
	v, err := b.Vector("ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	equalVec(t, v, vec(2, 4))
	if n := count(t, b, "ns"); n != 1 {
		t.Fatalf("Count = %d after replacing, want 1", n)
	}
}

// testPutNilVectorRemovesOld: a stored vector never outlives the text it
// was computed from.
func testPutNilVectorRemovesOld(t *testing.T, o Opener) {
	b := open(t, o, 0)
	m := mem("ns", "a")
	put(t, b, m, vec(1, 4))
	m.Text = "changed"
	put(t, b, m, nil)
	if _, err := b.Vector("ns", "a"); !wantErr(t, "stale vector survived: Vector", err, store.ErrNotFound) {
		return
	}
	recs, err := b.GetMany("ns", []string{"a"}, true)
	if err != nil || len(recs) != 1 || recs[0].Vector != nil || recs[0].Memory.Text != "changed" {
		t.Fatalf("GetMany = %+v, %v; want the new text without a vector", recs, err)
	}
	if err := b.ForEach(func(r store.Record) error {
		if r.Vector != nil {
			t.Errorf("ForEach: stale vector of %s", r.Memory.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if st, err := b.CheckProgress(nil, nil); err != nil || st.Vectors != 0 || st.Problems != 0 {
		t.Fatalf("CheckProgress = %+v, %v; want no vectors", st, err)
	}
}

// testNamespaceIsolation: memories, vectors, counts and generations of
// one namespace are never seen through another, even a prefix of it.
func testNamespaceIsolation(t *testing.T, o Opener) {
	b := open(t, o, 0)
	for _, it := range []struct{ ns, id string }{{"alice", "x"}, {"alice", "y"}, {"bob", "x"}, {"al", "ice"}, {"alic", "e"}} {
		m := mem(it.ns, it.id)
		m.Text = it.ns + "/" + it.id
		put(t, b, m, vec(len(it.ns), 2))
	}
	tests := []struct {
		ns      string
		wantIDs []string
	}{
		{"alice", []string{"x", "y"}},
		{"bob", []string{"x"}},
		{"al", []string{"ice"}},
		{"alic", []string{"e"}},
		{"carol", nil},
		{"Alice", nil},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			var got []string
			err := b.List(tt.ns, func(m memory.Memory) error {
				if m.Namespace != tt.ns || m.Text != tt.ns+"/"+m.ID {
					t.Errorf("leaked memory %+v into %s", m, tt.ns)
				}
				got = append(got, m.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.wantIDs) {
				t.Fatalf("List ids = %v, want %v", got, tt.wantIDs)
			}
			if n := count(t, b, tt.ns); n != len(tt.wantIDs) {
				t.Fatalf("Count = %d, want %d", n, len(tt.wantIDs))
			}
			recs := pageAll(t, b, tt.ns, 10, true)
			if !slices.Equal(ids(recs), tt.wantIDs) {
				t.Fatalf("Page ids = %v, want %v", ids(recs), tt.wantIDs)
			}
			for _, r := range recs {
				if r.Memory.Namespace != tt.ns || !sameVec(r.Vector, vec(len(tt.ns), 2)) {
					t.Fatalf("Page: %s/%s with vector %v leaked into %s", r.Memory.Namespace, r.Memory.ID, r.Vector, tt.ns)
				}
			}
			recs, err = b.GetMany(tt.ns, []string{"x", "y", "ice", "e"}, true)
			if err != nil || !slices.Equal(ids(recs), tt.wantIDs) {
				t.Fatalf("GetMany ids = %v, %v; want %v", ids(recs), err, tt.wantIDs)
			}
			if g := gen(t, b, tt.ns); g.IsZero() != (len(tt.wantIDs) == 0) {
				t.Fatalf("VectorGen = %v with %d memories", g, len(tt.wantIDs))
			}
		})
	}
	if _, err := b.Get("bob", "y"); !wantErr(t, "Get bob/y", err, store.ErrNotFound) {
		return
	}
	if _, err := b.Vector("bob", "y"); !wantErr(t, "Vector bob/y", err, store.ErrNotFound) {
		return
	}
	if got, err := b.Get("bob", "x"); err != nil || got.Text != "bob/x" {
		t.Fatalf("bob/x = %q, %v", got.Text, err)
	}
	if v, err := b.Vector("bob", "x"); err != nil || !sameVec(v, vec(3, 2)) {
		t.Fatalf("bob/x vector = %v, %v", v, err)
	}
	if nss := namespaces(t, b); !slices.Equal(nss, []string{"al", "alic", "alice", "bob"}) {
		t.Fatalf("Namespaces = %v", nss)
	}
	// Writes to one namespace leave the others' generations alone.
	before := gen(t, b, "alice")
	put(t, b, mem("alic", "e"), vec(9, 2))
	if err := b.Delete("al", "ice"); err != nil {
		t.Fatal(err)
	}
	if g := gen(t, b, "alice"); g != before {
		t.Fatalf("alice's generation moved %v → %v with writes to al and alic", before, g)
	}
	if n := count(t, b, "alice"); n != 2 {
		t.Fatalf("Count(alice) = %d after deleting al/ice, want 2", n)
	}
}
