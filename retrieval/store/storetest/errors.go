package storetest

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// badKeys are namespaces and IDs that memory.ValidateNamespace and
// ValidateID refuse (maxLen: the longest valid key).
func badKeys(maxLen int) []string {
	return []string{
		"", "../x", "a/b", `a\b`, ".a", ".", "..", "a..b", strings.Repeat("k", maxLen+1),
		"ñ", "日本", "a b", "a\x00b", "a\nb", "%", "a*", "a'b", `a"b`, "é", "\xff",
	}
}

// testInvalid: every method refuses invalid namespaces, IDs and memories
// with ErrInvalid, and writes nothing.
func testInvalid(t *testing.T, o Opener) {
	b := open(t, o, 0)
	put(t, b, mem("ns", "ok"), vec(1, 2))
	// The longest valid keys are fine.
	long := mem(strings.Repeat("n", memory.MaxNamespaceLen), strings.Repeat("i", memory.MaxIDLen))
	put(t, b, long, vec(2, 2))
	if got, err := b.Get(long.Namespace, long.ID); err != nil {
		t.Fatalf("Get of the longest valid keys: %v", err)
	} else {
		equalMem(t, got, long)
	}
	before := snapshot(t, b)
	keepAll := func(store.Record) bool { return true }
	byNamespace := map[string]func(ns string) error{
		"Put":      func(ns string) error { return b.Put(mem(ns, "ok"), vec(1, 2)) },
		"PutBatch": func(ns string) error { return b.PutBatch([]store.Item{{Memory: mem(ns, "ok")}}) },
		"Get":      func(ns string) error { _, err := b.Get(ns, "ok"); return err },
		"Vector":   func(ns string) error { _, err := b.Vector(ns, "ok"); return err },
		"Delete":   func(ns string) error { return b.Delete(ns, "ok") },
		"List":     func(ns string) error { return b.List(ns, func(memory.Memory) error { return nil }) },
		"Count":    func(ns string) error { _, err := b.Count(ns); return err },
		"Page":     func(ns string) error { _, _, err := b.Page(ns, "", 10, true); return err },
		"GetMany":  func(ns string) error { _, err := b.GetMany(ns, []string{"ok"}, true); return err },
		"PutVectorsIf": func(ns string) error {
			_, err := b.PutVectorsIf(ns, map[string][]float32{"ok": vec(3, 2)}, keepAll)
			return err
		},
		"VectorGen":     func(ns string) error { _, err := b.VectorGen(ns); return err },
		"BumpVectorGen": func(ns string) error { _, err := b.BumpVectorGen(ns); return err },
	}
	for name, call := range byNamespace {
		for _, ns := range badKeys(memory.MaxNamespaceLen) {
			wantErr(t, name+" with namespace "+short(ns), call(ns), store.ErrInvalid)
		}
	}
	byID := map[string]func(id string) error{
		"Put":      func(id string) error { return b.Put(mem("ns", id), vec(1, 2)) },
		"PutBatch": func(id string) error { return b.PutBatch([]store.Item{{Memory: mem("ns", id)}}) },
		"Get":      func(id string) error { _, err := b.Get("ns", id); return err },
		"Vector":   func(id string) error { _, err := b.Vector("ns", id); return err },
		"Delete":   func(id string) error { return b.Delete("ns", id) },
		"GetMany":  func(id string) error { _, err := b.GetMany("ns", []string{"ok", id}, true); return err },
		"PutVectorsIf": func(id string) error {
			_, err := b.PutVectorsIf("ns", map[string][]float32{"ok": vec(3, 2), id: vec(3, 2)}, keepAll)
			return err
		},
	}
	for name, call := range byID {
		for _, id := range badKeys(memory.MaxIDLen) {
			wantErr(t, name+" with ID "+short(id), call(id), store.ErrInvalid)
		}
	}
	tooMany := memory.Metadata{}
	for i := range memory.MaxMetadataKeys + 1 {
		tooMany[strings.Repeat("k", i+1)] = memory.String("v")
	}
	badMemories := []struct {
		name string
		edit func(*memory.Memory)
	}{
		{"empty text", func(m *memory.Memory) { m.Text = "" }},
		{"text not UTF-8", func(m *memory.Memory) { m.Text = "ok \xff\xfe" }},
		{"text a lone surrogate", func(m *memory.Memory) { m.Text = "\xed\xa0\x80" }},
		{"text too long", func(m *memory.Memory) { m.Text = strings.Repeat("x", memory.MaxTextLen+1) }},
		{"source with NUL", func(m *memory.Memory) { m.Source = "a\x00b" }},
		{"source not UTF-8", func(m *memory.Memory) { m.Source = "\xc3" }},
		{"source too long", func(m *memory.Memory) { m.Source = strings.Repeat("s", memory.MaxSourceLen+1) }},
		{"metadata empty key", func(m *memory.Memory) { m.Metadata = memory.Strings(map[string]string{"": "v"}) }},
		{"metadata too many keys", func(m *memory.Memory) { m.Metadata = tooMany }},
		{"metadata key too long", func(m *memory.Memory) {
			m.Metadata = memory.Strings(map[string]string{strings.Repeat("k", memory.MaxMetadataKeyLen+1): "v"})
		}},
		{"metadata value too long", func(m *memory.Memory) {
			m.Metadata = memory.Strings(map[string]string{"k": strings.Repeat("v", memory.MaxMetadataValLen+1)})
		}},
		{"metadata key not UTF-8", func(m *memory.Memory) { m.Metadata = memory.Strings(map[string]string{"\xff": "v"}) }},
		{"metadata value not UTF-8", func(m *memory.Memory) { m.Metadata = memory.Strings(map[string]string{"k": "\xff"}) }},
		{"negative schema version", func(m *memory.Memory) { m.SchemaVersion = -1 }},
		{"schema version from the future", func(m *memory.Memory) { m.SchemaVersion = memory.CurrentSchema + 1 }},
	}
	for _, tc := range badMemories {
		for _, id := range []string{"ok", "new"} { // over a stored memory, and a new one
			m := mem("ns", id)
			tc.edit(&m)
			wantErr(t, "Put with "+tc.name, b.Put(m, vec(4, 2)), store.ErrInvalid)
			wantErr(t, "Put without a vector with "+tc.name, b.Put(m, nil), store.ErrInvalid)
		}
	}
	unchanged(t, b, before, "refused calls")
}

// testDimension: with a dimension set, only vectors of that dimension are
// stored; without, any dimension in 1..store.MaxDimension.
func testDimension(t *testing.T, o Opener) {
	t.Run("set", func(t *testing.T) {
		b := open(t, o, 4)
		put(t, b, mem("ns", "a"), vec(1, 4))
		put(t, b, mem("ns", "b"), nil)
		before := snapshot(t, b)
		keepAll := func(store.Record) bool { return true }
		for _, dim := range []int{1, 3, 5, 8} {
			what := fmt.Sprint("dimension ", dim)
			wantErr(t, "Put of "+what, b.Put(mem("ns", "a"), vec(2, dim)), store.ErrInvalid)
			wantErr(t, "Put (new memory) of "+what, b.Put(mem("ns", "c"), vec(2, dim)), store.ErrInvalid)
			wantErr(t, "PutBatch of "+what, b.PutBatch([]store.Item{{Memory: mem("ns", "b"), Vector: vec(2, 4)}, {Memory: mem("ns", "c"), Vector: vec(2, dim)}}), store.ErrInvalid)
			_, err := b.PutVectorsIf("ns", map[string][]float32{"b": vec(2, dim)}, keepAll)
			wantErr(t, "PutVectorsIf of "+what, err, store.ErrInvalid)
		}
		unchanged(t, b, before, "vectors of the wrong dimension")
		if w, err := b.PutVectorsIf("ns", map[string][]float32{"b": vec(2, 4)}, keepAll); err != nil || len(w) != 1 {
			t.Fatalf("PutVectorsIf of the right dimension: %v, %v", w, err)
		}
	})
	t.Run("any", func(t *testing.T) {
		b := open(t, o, 0)
		for _, dim := range []int{1, 3, 7, 384, store.MaxDimension} {
			m := mem("ns", strings.Repeat("d", 1+dim%50))
			v := vec(dim, dim)
			put(t, b, m, v)
			got, err := b.Vector(m.Namespace, m.ID)
			if err != nil || !sameVec(got, v) {
				t.Fatalf("dimension %d: read back %d floats, %v", dim, len(got), err)
			}
		}
		before := snapshot(t, b)
		wantErr(t, "Put of dimension MaxDimension+1", b.Put(mem("ns", "big"), make([]float32, store.MaxDimension+1)), store.ErrInvalid)
		wantErr(t, "Put of an empty vector", b.Put(mem("ns", "empty"), []float32{}), store.ErrInvalid)
		unchanged(t, b, before, "vectors of no valid dimension")
	})
}

// testNonFiniteVector: NaN and ±Inf are refused by every write, which then
// writes nothing.
func testNonFiniteVector(t *testing.T, o Opener) {
	b := open(t, o, 4)
	put(t, b, mem("ns", "a"), vec(1, 4))
	put(t, b, mem("ns", "b"), nil)
	before := snapshot(t, b)
	keepAll := func(store.Record) bool { return true }
	for _, x := range []float32{float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for i := range 4 {
			v := vec(2, 4)
			v[i] = x
			what := func(call string) string { return fmt.Sprint(call, " of ", v) }
			wantErr(t, what("Put over a vector"), b.Put(mem("ns", "a"), v), store.ErrInvalid)
			wantErr(t, what("Put"), b.Put(mem("ns", "c"), v), store.ErrInvalid)
			wantErr(t, what("PutBatch"), b.PutBatch([]store.Item{{Memory: mem("ns", "b"), Vector: vec(3, 4)}, {Memory: mem("ns", "a"), Vector: v}}), store.ErrInvalid)
			_, err := b.PutVectorsIf("ns", map[string][]float32{"a": vec(3, 4), "b": v}, keepAll)
			wantErr(t, what("PutVectorsIf"), err, store.ErrInvalid)
		}
	}
	unchanged(t, b, before, "non-finite vectors")
}

// testClosed: after Close every method fails with ErrClosed and calls no
// callback.
func testClosed(t *testing.T, o Opener) {
	b := open(t, o, 0)
	put(t, b, mem("ns", "a"), vec(1, 2))
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	called := ""
	cb := func(name string) { called = name }
	calls := []struct {
		name string
		call func() error
	}{
		{"Put", func() error { return b.Put(mem("ns", "b"), nil) }},
		{"Put with vector", func() error { return b.Put(mem("ns", "b"), vec(1, 2)) }},
		{"PutBatch", func() error { return b.PutBatch([]store.Item{{Memory: mem("ns", "b")}}) }},
		{"Delete", func() error { return b.Delete("ns", "a") }},
		{"PutVectorsIf", func() error {
			_, err := b.PutVectorsIf("ns", map[string][]float32{"a": vec(2, 2)}, func(store.Record) bool { cb("keep"); return true })
			return err
		}},
		{"Get", func() error { _, err := b.Get("ns", "a"); return err }},
		{"Vector", func() error { _, err := b.Vector("ns", "a"); return err }},
		{"GetMany", func() error { _, err := b.GetMany("ns", []string{"a"}, true); return err }},
		{"Page", func() error { _, _, err := b.Page("ns", "", 10, true); return err }},
		{"List", func() error { return b.List("ns", func(memory.Memory) error { cb("List"); return nil }) }},
		{"Namespaces", func() error { _, err := b.Namespaces(); return err }},
		{"Count", func() error { _, err := b.Count("ns"); return err }},
		{"ForEach", func() error {
			return b.ForEach(func(store.Record) error { cb("ForEach"); return nil },
				store.WithProgress(1, func(int, int) { cb("ForEach progress") }))
		}},
		{"VectorGen", func() error { _, err := b.VectorGen("ns"); return err }},
		{"VectorGens", func() error { _, err := b.VectorGens(); return err }},
		{"BumpVectorGen", func() error { _, err := b.BumpVectorGen("ns"); return err }},
		{"CheckProgress", func() error {
			_, err := b.CheckProgress(func(store.Problem) { cb("CheckProgress problem") }, func(int64, int64) { cb("CheckProgress progress") })
			return err
		}},
	}
	// (An empty PutBatch is not among them: the bbolt store returns nil
	// for it without looking at the file, even when closed.)
	for _, c := range calls {
		called = ""
		wantErr(t, c.name+" after Close", c.call(), store.ErrClosed)
		if called != "" {
			t.Errorf("%s after Close called its callback %s", c.name, called)
		}
	}
	// Closing again (the opener's cleanup will) is harmless.
	if err := b.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close: %v, want nil or ErrClosed", err)
	}
}
