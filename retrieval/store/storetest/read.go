package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// orderKeys are valid IDs and namespaces whose byte order differs from
// what a case-insensitive or natural-language collation would give:
// uppercase sorts before lowercase, '-' '.' ':' '_' and digits sort where
// their bytes put them (never ignored), "10" before "9", and keys that
// differ only in case are different keys. (Keys are ASCII only: see
// memory.ValidateID; non-ASCII keys are ErrInvalid, tested in Invalid.)
var orderKeys = []string{
	"b", "B", "a", "A", "Z", "z", "_", "-", "0", "9", "10", "a-b", "a.b", "a:b", "a_b",
	"aB", "ab", "Ab", "AB", "a0", "a-", "-a", "_a", "Z9", ":", "x.y.z", "a--", "aa", "a-a", "a_", "a:",
	"Ba", "bA", "ba", "BA", "1", "01", "001", "1-0", "1.0", "1_0", "a0b", "a00", "-", "--",
}

// testByteOrder: IDs and namespaces come back in byte order from every
// method that promises an order, and Page's cursor follows it.
func testByteOrder(t *testing.T, o Opener) {
	keys := slices.Compact(slices.Sorted(slices.Values(orderKeys)))
	b := open(t, o, 0)
	// Insert in an order that is not byte order, some with vectors.
	for i, k := range orderKeys {
		if slices.Index(orderKeys, k) != i {
			continue
		}
		var v []float32
		if i%2 == 0 {
			v = vec(i, 2)
		}
		put(t, b, mem("ids", k), v)
		put(t, b, mem(k, "x"), nil)
	}
	if n := count(t, b, "ids"); n != len(keys) {
		t.Fatalf("Count = %d, want %d: keys differing only in case must stay apart", n, len(keys))
	}
	if got := listIDs(t, b, "ids"); !slices.Equal(got, keys) {
		t.Errorf("List order\n%q\nwant byte order\n%q", got, keys)
	}
	for _, limit := range []int{1, 2, 3, 7, store.MaxPage} {
		if got := ids(pageAll(t, b, "ids", limit, limit%2 == 1)); !slices.Equal(got, keys) {
			t.Errorf("Page walk with limit %d:\n%q\nwant byte order\n%q", limit, got, keys)
		}
	}
	// Every key as the cursor: the next page starts at the next key in
	// byte order, also from keys that are not stored.
	probes := append(slices.Clone(keys), "", "0a", "A0", "B0", "Zz", "_b", "a.", "a.c", "a:c", "aA", "zz", "~", "a-c", "Z", "9z")
	for _, after := range probes {
		i, _ := slices.BinarySearch(keys, after)
		if i < len(keys) && keys[i] == after {
			i++
		}
		recs, _, err := b.Page("ids", after, 1, false)
		if err != nil {
			t.Fatalf("Page after %q: %v", after, err)
		}
		var want []string
		if i < len(keys) {
			want = keys[i : i+1]
		}
		if got := ids(recs); !slices.Equal(got, want) {
			t.Errorf("Page after %q = %q, want %q", after, got, want)
		}
	}
	wantNS := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(keys), "ids"))))
	if got := namespaces(t, b); !slices.Equal(got, wantNS) {
		t.Errorf("Namespaces\n%q\nwant byte order\n%q", got, wantNS)
	}
	var got, want []string
	for _, ns := range wantNS {
		if ns == "ids" {
			for _, k := range keys {
				want = append(want, ns+"/"+k)
			}
			continue
		}
		want = append(want, ns+"/x")
	}
	if err := b.ForEach(func(r store.Record) error {
		got = append(got, r.Memory.Namespace+"/"+r.Memory.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("ForEach order\n%q\nwant byte order\n%q", got, want)
	}
}

// testPage: Page's cursor and limits.
func testPage(t *testing.T, o Opener) {
	b := open(t, o, 0)
	var items []store.Item
	for i := range 25 {
		items = append(items, store.Item{Memory: mem("a", fmt.Sprintf("m%02d", i)), Vector: vec(i, 4)})
	}
	items = append(items, store.Item{Memory: mem("b", "other")}, store.Item{Memory: mem("a0", "m00"), Vector: vec(1, 4)})
	putBatch(t, b, items)
	tests := []struct {
		name      string
		after     string
		limit     int
		wantFirst string
		wantN     int
		wantNext  string
	}{
		{"first page", "", 10, "m00", 10, "m09"},
		{"middle", "m09", 10, "m10", 10, "m19"},
		{"last partial", "m19", 10, "m20", 5, ""},
		{"exact end", "m14", 10, "m15", 10, ""},
		{"after a missing key", "m105", 3, "m11", 3, "m13"},
		{"before the first", "a", 2, "m00", 2, "m01"},
		{"past the end", "zz", 10, "", 0, ""},
		{"after the last", "m24", 10, "", 0, ""},
		{"limit 1", "m00", 1, "m01", 1, "m01"},
		{"limit MaxPage", "", store.MaxPage, "m00", 25, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, next, err := b.Page("a", tc.after, tc.limit, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tc.wantN || next != tc.wantNext {
				t.Fatalf("got %d records, next %q; want %d, %q", len(recs), next, tc.wantN, tc.wantNext)
			}
			if tc.wantN > 0 && recs[0].Memory.ID != tc.wantFirst {
				t.Fatalf("first %q, want %q", recs[0].Memory.ID, tc.wantFirst)
			}
			for _, r := range recs {
				var i int
				if _, err := fmt.Sscanf(r.Memory.ID, "m%02d", &i); err != nil || r.Memory.Namespace != "a" || !sameVec(r.Vector, vec(i, 4)) {
					t.Fatalf("record %s/%s: wrong namespace or vector %v", r.Memory.Namespace, r.Memory.ID, r.Vector)
				}
				equalMem(t, r.Memory, mem("a", r.Memory.ID))
			}
		})
	}
	// Walking every page visits every memory exactly once, in order.
	seen := map[string]bool{}
	prev := ""
	for _, r := range pageAll(t, b, "a", 7, false) {
		if seen[r.Memory.ID] || r.Vector != nil || r.Memory.ID <= prev {
			t.Fatalf("%s seen twice, out of order or vector loaded unasked", r.Memory.ID)
		}
		seen[r.Memory.ID] = true
		prev = r.Memory.ID
	}
	if len(seen) != 25 {
		t.Fatalf("walk saw %d memories, want 25", len(seen))
	}
	if recs, next, err := b.Page("b", "", 5, true); err != nil || len(recs) != 1 || recs[0].Vector != nil || next != "" {
		t.Fatalf("Page(b) = %+v, %q, %v; want other without a vector", recs, next, err)
	}
	if recs, next, err := b.Page("nope", "", 5, true); err != nil || len(recs) != 0 || next != "" {
		t.Fatalf("Page of a missing namespace = %v, %q, %v", ids(recs), next, err)
	}
	for _, bad := range []struct {
		ns    string
		limit int
	}{{"a", 0}, {"a", -1}, {"a", store.MaxPage + 1}, {"a", 1 << 40}, {"../x", 5}, {"", 5}} {
		if _, _, err := b.Page(bad.ns, "", bad.limit, false); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Page(%q, limit %d) err = %v, want ErrInvalid", bad.ns, bad.limit, err)
		}
	}
}

// testGetMany: the records of the IDs that exist, in the order asked.
func testGetMany(t *testing.T, o Opener) {
	b := open(t, o, 0)
	putBatch(t, b, []store.Item{{Memory: mem("a", "x"), Vector: vec(1, 3)}, {Memory: mem("a", "y")}, {Memory: mem("b", "z")}, {Memory: mem("a", "w"), Vector: vec(2, 3)}})
	recs, err := b.GetMany("a", []string{"y", "missing", "x", "z", "w"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(recs); !slices.Equal(got, []string{"y", "x", "w"}) {
		t.Fatalf("got %v, want y x w (missing is missing, z is in another namespace)", got)
	}
	if recs[0].Vector != nil {
		t.Fatal("y has no vector")
	}
	equalVec(t, recs[1].Vector, vec(1, 3))
	equalVec(t, recs[2].Vector, vec(2, 3))
	for _, r := range recs {
		equalMem(t, r.Memory, mem("a", r.Memory.ID))
	}
	recs, err = b.GetMany("a", []string{"w", "x", "y"}, false)
	if err != nil || !slices.Equal(ids(recs), []string{"w", "x", "y"}) {
		t.Fatalf("without vectors: %v, %v", ids(recs), err)
	}
	for _, r := range recs {
		if r.Vector != nil {
			t.Fatalf("%s: vector loaded unasked", r.Memory.ID)
		}
	}
	// The order of ids, whatever it is: reversed, and an ID asked twice
	// comes back twice.
	if recs, err := b.GetMany("a", []string{"y", "x", "w", "x"}, false); err != nil || !slices.Equal(ids(recs), []string{"y", "x", "w", "x"}) {
		t.Fatalf("GetMany(y x w x) = %v, %v", ids(recs), err)
	}
	for _, tc := range []struct {
		name string
		ns   string
		ids  []string
	}{
		{"missing namespace", "nope", []string{"x"}},
		{"no ids", "a", nil},
		{"empty ids", "a", []string{}},
		{"only missing ids", "a", []string{"q", "r"}},
	} {
		if recs, err := b.GetMany(tc.ns, tc.ids, true); err != nil || len(recs) != 0 {
			t.Errorf("%s: %v, %v; want none", tc.name, ids(recs), err)
		}
	}
	for _, tc := range []struct {
		ns  string
		ids []string
	}{{"a", []string{"bad/id"}}, {"a", []string{"x", ""}}, {"a", []string{"x", "..", "y"}}, {"../a", []string{"x"}}} {
		if _, err := b.GetMany(tc.ns, tc.ids, false); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("GetMany(%q, %q) err = %v, want ErrInvalid", tc.ns, tc.ids, err)
		}
	}
}

// testCallbackErrorStops: List and ForEach stop at the first error their
// callback returns and return it; the backend stays usable.
func testCallbackErrorStops(t *testing.T, o Opener) {
	b := open(t, o, 0)
	for _, id := range []string{"a", "b", "c"} {
		put(t, b, mem("ns", id), vec(1, 2))
		put(t, b, mem("ns2", id), nil)
	}
	stop := errors.New("stop")
	n := 0
	if err := b.List("ns", func(memory.Memory) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("List err=%v n=%d; want stop after 1", err, n)
	}
	n = 0
	if err := b.ForEach(func(store.Record) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("ForEach err=%v n=%d; want stop after 1", err, n)
	}
	n = 0
	if err := b.ForEach(func(store.Record) error {
		n++
		if n == 4 {
			return stop
		}
		return nil
	}, store.WithProgress(1, func(int, int) {})); !errors.Is(err, stop) || n != 4 {
		t.Fatalf("ForEach with progress err=%v n=%d; want stop after 4", err, n)
	}
	// Nothing is left holding the backend: writes and reads go on.
	put(t, b, mem("ns", "d"), vec(2, 2))
	if err := b.Delete("ns2", "a"); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, b, "ns"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("List after the stopped ones = %v", got)
	}
}

// testForEachProgress: WithProgress reports after every `every` records
// and once at the end; total counts every namespace's memories.
func testForEachProgress(t *testing.T, o Opener) {
	b := open(t, o, 0)
	var calls [][2]int
	n := 0
	progress := func(every int) [][2]int {
		t.Helper()
		calls, n = nil, 0
		err := b.ForEach(func(store.Record) error { n++; return nil }, store.WithProgress(every, func(done, total int) {
			if done != n {
				t.Errorf("progress(%d, %d) after %d records", done, total, n)
			}
			calls = append(calls, [2]int{done, total})
		}))
		if err != nil {
			t.Fatal(err)
		}
		return calls
	}
	// An empty store: one call, at the end.
	if got := progress(3); !slices.Equal(got, [][2]int{{0, 0}}) {
		t.Fatalf("empty store: progress %v; want one call (0, 0)", got)
	}
	for i := range 4 {
		put(t, b, mem("ns1", fmt.Sprint(i)), vec(i, 2))
	}
	for i := range 3 {
		put(t, b, mem("ns2", fmt.Sprint(i)), nil)
	}
	if got := progress(3); !slices.Equal(got, [][2]int{{3, 7}, {6, 7}, {7, 7}}) {
		t.Errorf("every 3 of 7 in two namespaces: %v", got)
	}
	for _, every := range []int{0, -5, 100} { // 0 and below: every 1000
		if got := progress(every); !slices.Equal(got, [][2]int{{7, 7}}) {
			t.Errorf("every %d: %v, want one call (7, 7)", every, got)
		}
	}
	n = 0
	if err := b.ForEach(func(store.Record) error { n++; return nil }); err != nil || n != 7 {
		t.Fatalf("ForEach without options: %d records, %v", n, err)
	}
}

// testNotFound: absent memories, vectors and namespaces.
func testNotFound(t *testing.T, o Opener) {
	b := open(t, o, 0)
	if nss := namespaces(t, b); len(nss) != 0 {
		t.Fatalf("a new backend has namespaces %v", nss)
	}
	if gens, err := b.VectorGens(); err != nil || len(gens) != 0 {
		t.Fatalf("a new backend has generations %v, %v", gens, err)
	}
	put(t, b, mem("ns", "novec"), nil)
	put(t, b, mem("ns", "vec"), vec(1, 2))
	notFound := []struct {
		name string
		call func() error
	}{
		{"Get missing id", func() error { _, err := b.Get("ns", "missing"); return err }},
		{"Get missing namespace", func() error { _, err := b.Get("nope", "vec"); return err }},
		{"Vector missing id", func() error { _, err := b.Vector("ns", "missing"); return err }},
		{"Vector of a memory without one", func() error { _, err := b.Vector("ns", "novec"); return err }},
		{"Vector missing namespace", func() error { _, err := b.Vector("nope", "vec"); return err }},
		{"Delete missing id", func() error { return b.Delete("ns", "missing") }},
		{"Delete missing namespace", func() error { return b.Delete("nope", "vec") }},
		{"BumpVectorGen missing namespace", func() error { _, err := b.BumpVectorGen("nope"); return err }},
	}
	before := snapshot(t, b)
	for _, tc := range notFound {
		wantErr(t, tc.name, tc.call(), store.ErrNotFound)
	}
	empty := []struct {
		name string
		call func() (int, error)
	}{
		{"Count", func() (int, error) { return b.Count("nope") }},
		{"List", func() (int, error) {
			n := 0
			err := b.List("nope", func(memory.Memory) error { n++; return nil })
			return n, err
		}},
		{"Page", func() (int, error) {
			recs, next, err := b.Page("nope", "", 10, true)
			if next != "" {
				return -1, fmt.Errorf("next %q", next)
			}
			return len(recs), err
		}},
		{"GetMany", func() (int, error) { recs, err := b.GetMany("nope", []string{"vec"}, true); return len(recs), err }},
		{"PutVectorsIf", func() (int, error) {
			w, err := b.PutVectorsIf("nope", map[string][]float32{"vec": vec(1, 2)}, func(store.Record) bool { return true })
			return len(w), err
		}},
		{"VectorGen", func() (int, error) {
			g, err := b.VectorGen("nope")
			if !g.IsZero() {
				return -1, fmt.Errorf("generation %v", g)
			}
			return 0, err
		}},
	}
	for _, tc := range empty {
		if n, err := tc.call(); n != 0 || err != nil {
			t.Errorf("%s of a missing namespace: %d, %v; want 0 and no error", tc.name, n, err)
		}
	}
	unchanged(t, b, before, "reads and failed writes of missing memories")
}
