package storetest

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Opener opens a new, empty backend for one test; dim is
// bolt.Options.Dimension's meaning (0: any dimension). The opener registers
// its own cleanup (Close, removing files / databases) with t.Cleanup.
// Reopen, when non-nil, closes b and opens the same data again (for
// persistence tests).
//
// Reopen opens the data with the dim b was opened with, and registers the
// new backend's Close with t.Cleanup as Open does; the suite does not use b
// after Reopen, except to see that it fails with ErrClosed.
type Opener struct {
	Open   func(t *testing.T, dim int) store.Backend
	Reopen func(t *testing.T, b store.Backend) store.Backend // nil: persistence tests skipped
}

// behaviours is the suite, in the order Run runs it.
var behaviours = []struct {
	name string
	run  func(t *testing.T, o Opener)
}{
	{"RoundTrip", testRoundTrip},
	{"Fields", testFields},
	{"VectorsAreCopies", testVectorsAreCopies},
	{"PutReplaces", testPutReplaces},
	{"PutNilVectorRemovesOld", testPutNilVectorRemovesOld},
	{"NamespaceIsolation", testNamespaceIsolation},
	{"PutBatch", testPutBatch},
	{"Delete", testDelete},
	{"DeleteNamespace", testDeleteNamespace},
	{"ByteOrder", testByteOrder},
	{"Page", testPage},
	{"GetMany", testGetMany},
	{"CallbackErrorStops", testCallbackErrorStops},
	{"ForEachProgress", testForEachProgress},
	{"NotFound", testNotFound},
	{"Invalid", testInvalid},
	{"Dimension", testDimension},
	{"NonFiniteVector", testNonFiniteVector},
	{"VectorGen", testVectorGen},
	{"VectorGenRecreated", testVectorGenRecreated},
	{"BumpVectorGen", testBumpVectorGen},
	{"PutVectorsIf", testPutVectorsIf},
	{"CheckProgress", testCheckProgress},
	{"Concurrency", testConcurrency},
	{"Closed", testClosed},
	{"Persistence", testPersistence},
}

// Run runs every behaviour of the store contract as subtests of t.
func Run(t *testing.T, o Opener) {
	t.Helper()
	if o.Open == nil {
		t.Fatal("storetest: Opener.Open is nil")
	}
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) { b.run(t, o) })
	}
}

// open opens a new, empty backend accepting vectors of dimension dim.
func open(t *testing.T, o Opener, dim int) store.Backend {
	t.Helper()
	b := o.Open(t, dim)
	if b == nil {
		t.Fatal("storetest: Opener.Open returned nil")
	}
	return b
}

// mem is a valid memory with every field set.
func mem(ns, id string) memory.Memory {
	return memory.Memory{
		ID: id, Namespace: ns, Text: "text of " + id,
		Time:     time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC),
		Source:   "/work/" + ns,
		Metadata: memory.Strings(map[string]string{"kind": "fact"}),
	}
}

// vec is a deterministic vector; different seeds give different vectors.
func vec(seed, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(seed*1000+i) / 7
	}
	return v
}

func put(t testing.TB, b store.Backend, m memory.Memory, v []float32) {
	t.Helper()
	if err := b.Put(m, v); err != nil {
		t.Fatalf("Put %s/%s: %v", m.Namespace, m.ID, err)
	}
}

func putBatch(t testing.TB, b store.Backend, items []store.Item) {
	t.Helper()
	if err := b.PutBatch(items); err != nil {
		t.Fatalf("PutBatch of %d: %v", len(items), err)
	}
}

// wantErr reports (without stopping) an err that is not want: nil when want
// is nil, else one errors.Is accepts. It returns whether err was right.
func wantErr(t testing.TB, what string, err, want error) bool {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: %v, want no error", what, err)
			return false
		}
		return true
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
		return false
	}
	return true
}

// diffMemory describes how got differs from want (normalised), "" if in
// nothing: Time must be the same instant with the same UTC offset (the
// zone's name is not kept), Text and Source byte for byte, Metadata the same
// keys and values (nil and empty are the same).
func diffMemory(got, want memory.Memory) string {
	want = want.Normalize()
	var d []string
	if got.Namespace != want.Namespace || got.ID != want.ID {
		d = append(d, fmt.Sprintf("key %s/%s, want %s/%s", got.Namespace, got.ID, want.Namespace, want.ID))
	}
	if got.Text != want.Text {
		d = append(d, fmt.Sprintf("text %s, want %s", short(got.Text), short(want.Text)))
	}
	_, gotOff := got.Time.Zone()
	_, wantOff := want.Time.Zone()
	if !got.Time.Equal(want.Time) || gotOff != wantOff {
		d = append(d, fmt.Sprintf("time %s (offset %ds), want %s (offset %ds)",
			got.Time.Format(time.RFC3339Nano), gotOff, want.Time.Format(time.RFC3339Nano), wantOff))
	}
	if got.Source != want.Source {
		d = append(d, fmt.Sprintf("source %s, want %s", short(got.Source), short(want.Source)))
	}
	if !maps.Equal(got.Metadata, want.Metadata) {
		d = append(d, fmt.Sprintf("metadata %s, want %s", short(fmt.Sprintf("%q", got.Metadata)), short(fmt.Sprintf("%q", want.Metadata))))
	}
	if got.SchemaVersion != want.SchemaVersion {
		d = append(d, fmt.Sprintf("schema version %d, want %d", got.SchemaVersion, want.SchemaVersion))
	}
	return strings.Join(d, "; ")
}

// short quotes s, cut to a readable length.
func short(s string) string {
	const n = 120
	if len(s) > n {
		return fmt.Sprintf("%q… (%d bytes)", s[:n], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func equalMem(t testing.TB, got, want memory.Memory) {
	t.Helper()
	if d := diffMemory(got, want); d != "" {
		t.Fatalf("memory %s/%s: %s", want.Namespace, want.ID, d)
	}
}

// sameVec reports whether got and want hold the same float32s bit for bit
// (so -0 is not 0) and are both nil or both not.
func sameVec(got, want []float32) bool {
	if (got == nil) != (want == nil) || len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return false
		}
	}
	return true
}

func equalVec(t testing.TB, got, want []float32) {
	t.Helper()
	if !sameVec(got, want) {
		t.Fatalf("vector %v, want %v", got, want)
	}
}

// state is everything a backend holds, in a form that compares with ==:
// for telling that a failed write changed nothing.
type state struct {
	namespaces string
	records    string
	gens       string
}

func snapshot(t testing.TB, b store.Backend) state {
	t.Helper()
	nss, err := b.Namespaces()
	if err != nil {
		t.Fatalf("Namespaces: %v", err)
	}
	var recs []string
	if err := b.ForEach(func(r store.Record) error {
		recs = append(recs, recordString(r))
		return nil
	}); err != nil {
		t.Fatalf("ForEach: %v", err)
	}
	gens, err := b.VectorGens()
	if err != nil {
		t.Fatalf("VectorGens: %v", err)
	}
	var gs []string
	for _, ns := range slices.Sorted(maps.Keys(gens)) {
		gs = append(gs, ns+"="+gens[ns].String())
	}
	return state{
		namespaces: strings.Join(nss, "\n"),
		records:    strings.Join(recs, "\n"),
		gens:       strings.Join(gs, "\n"),
	}
}

// recordString is r with every field spelled out exactly.
func recordString(r store.Record) string {
	m := r.Memory
	_, off := m.Time.Zone()
	var md []string
	for _, k := range slices.Sorted(maps.Keys(m.Metadata)) {
		md = append(md, fmt.Sprintf("%q=%q", k, m.Metadata[k]))
	}
	bits := make([]string, len(r.Vector))
	for i, f := range r.Vector {
		bits[i] = fmt.Sprintf("%08x", math.Float32bits(f))
	}
	return fmt.Sprintf("%s/%s text=%q time=%d.%09d%+d source=%q meta={%s} schema=%d vector=%v[%s]",
		m.Namespace, m.ID, m.Text, m.Time.Unix(), m.Time.Nanosecond(), off, m.Source,
		strings.Join(md, ","), m.SchemaVersion, r.Vector != nil, strings.Join(bits, " "))
}

// unchanged fails t when b's state is not before.
func unchanged(t testing.TB, b store.Backend, before state, what string) {
	t.Helper()
	after := snapshot(t, b)
	if after.namespaces != before.namespaces {
		t.Errorf("%s changed the namespaces:\n%s\nwas\n%s", what, after.namespaces, before.namespaces)
	}
	if after.records != before.records {
		t.Errorf("%s changed the records:\n%s\nwas\n%s", what, after.records, before.records)
	}
	if after.gens != before.gens {
		t.Errorf("%s changed the vector generations:\n%s\nwas\n%s", what, after.gens, before.gens)
	}
}

func ids(recs []store.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Memory.ID
	}
	return out
}

func listIDs(t testing.TB, b store.Backend, ns string) []string {
	t.Helper()
	var out []string
	if err := b.List(ns, func(m memory.Memory) error {
		out = append(out, m.ID)
		return nil
	}); err != nil {
		t.Fatalf("List %s: %v", ns, err)
	}
	return out
}

func count(t testing.TB, b store.Backend, ns string) int {
	t.Helper()
	n, err := b.Count(ns)
	if err != nil {
		t.Fatalf("Count %s: %v", ns, err)
	}
	return n
}

func namespaces(t testing.TB, b store.Backend) []string {
	t.Helper()
	nss, err := b.Namespaces()
	if err != nil {
		t.Fatalf("Namespaces: %v", err)
	}
	return nss
}

func gen(t testing.TB, b store.Backend, ns string) store.VectorGen {
	t.Helper()
	g, err := b.VectorGen(ns)
	if err != nil {
		t.Fatalf("VectorGen %s: %v", ns, err)
	}
	return g
}

// pageAll walks ns page by page with the given limit.
func pageAll(t testing.TB, b store.Backend, ns string, limit int, withVectors bool) []store.Record {
	t.Helper()
	var out []store.Record
	after := ""
	for range 100000 {
		recs, next, err := b.Page(ns, after, limit, withVectors)
		if err != nil {
			t.Fatalf("Page(%s, %q, %d): %v", ns, after, limit, err)
		}
		out = append(out, recs...)
		if next == "" {
			return out
		}
		if len(recs) == 0 || next != recs[len(recs)-1].Memory.ID {
			t.Fatalf("Page(%s, %q, %d): next %q is not the last ID of %v", ns, after, limit, next, ids(recs))
		}
		after = next
	}
	t.Fatalf("Page(%s, limit %d) never ends", ns, limit)
	return nil
}
