package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newDB returns the URL of a fresh database on the shared server.
func newDB(t testing.TB) string {
	t.Helper()
	return pgtest.Shared(t).NewDB(t)
}

// open opens url and closes the Store when t ends.
func open(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newStore opens a Store on a fresh database.
func newStore(t testing.TB) *Store {
	t.Helper()
	return open(t, newDB(t), Options{})
}

// sqlConn is a plain connection to url, for looking behind the Store.
func sqlConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func exec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func mem(ns, id, text string) memory.Memory {
	return memory.Memory{ID: id, Namespace: ns, Text: text,
		Time:     time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC),
		Metadata: memory.Strings(map[string]string{"k": "v"})}
}

func vec(seed, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(seed*1000+i) / 7
	}
	return v
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func seq(t testing.TB, s *Store, ns string) uint64 {
	t.Helper()
	n, err := s.Seq(context.Background(), ns)
	must(t, err)
	return n
}

func TestRoundTrip(t *testing.T) {
	s := newStore(t)
	m := mem("ns", "a", "hello\x00world ünïcode")
	m.Source = "/src"
	m.Time = time.Date(2023, 1, 2, 3, 4, 5, 999999999, time.FixedZone("X", 3600))
	must(t, s.Put(m, vec(1, 4)))
	got, err := s.Get("ns", "a")
	must(t, err)
	if want := m.Normalize(); got.Text != want.Text || !got.Time.Equal(want.Time) || got.Source != want.Source ||
		got.SchemaVersion != want.SchemaVersion || got.Metadata["k"] != memory.String("v") {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	v, err := s.Vector("ns", "a")
	must(t, err)
	if !slices.Equal(v, vec(1, 4)) {
		t.Fatalf("Vector = %v", v)
	}
	must(t, s.Put(mem("ns", "a", "again"), nil))
	if _, err := s.Vector("ns", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Vector after a Put without one: %v, want ErrNotFound", err)
	}
	if n, err := s.Count("ns"); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	must(t, s.Delete("ns", "a"))
	if _, err := s.Get("ns", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := s.Delete("ns", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete("other", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Delete in a namespace never written: %v", err)
	}
	nss, err := s.Namespaces()
	must(t, err)
	if len(nss) != 0 {
		t.Fatalf("Namespaces = %v after deleting the last memory", nss)
	}
}

func TestValidationBeforeSQL(t *testing.T) {
	s := newStore(t)
	must(t, s.Close()) // any SQL would fail with ErrClosed
	for name, err := range map[string]error{
		"bad ns":     s.Put(mem("../x", "a", "t"), nil),
		"empty text": s.Put(mem("ns", "a", ""), nil),
		"NaN":        s.Put(mem("ns", "a", "t"), []float32{float32(math.NaN())}),
		"empty vec":  s.Put(mem("ns", "a", "t"), []float32{}),
		"delete id":  s.Delete("ns", ""),
		"page limit": func() error { _, _, err := s.Page("ns", "", 0, false); return err }(),
		"changes":    func() error { _, err := s.Changes(context.Background(), "ns", store.Cursor{}, 0, false); return err }(),
		"get many":   func() error { _, err := s.GetMany("ns", []string{"a", "b/c"}, false); return err }(),
	} {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if err := s.Put(mem("ns", "a", "t"), nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	dimmed := open(t, newDB(t), Options{Dimension: 3})
	if err := dimmed.Put(mem("ns", "a", "t"), vec(1, 4)); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("wrong dimension: %v, want ErrInvalid", err)
	}
}

func TestSeqPerTransaction(t *testing.T) {
	s := newStore(t)
	if n := seq(t, s, "never"); n != 0 {
		t.Fatalf("Seq of an untouched namespace = %d", n)
	}
	must(t, s.Put(mem("a", "1", "x"), nil))
	must(t, s.Put(mem("a", "2", "x"), nil))
	if n := seq(t, s, "a"); n != 2 {
		t.Fatalf("Seq after two Puts = %d, want 2", n)
	}
	// One batch over two namespaces: one sequence number in each.
	var items []store.Item
	for i := range 10 {
		items = append(items, store.Item{Memory: mem("a", fmt.Sprint("b", i), "x")}, store.Item{Memory: mem("b", fmt.Sprint(i), "x")})
	}
	must(t, s.PutBatch(items))
	if a, b := seq(t, s, "a"), seq(t, s, "b"); a != 3 || b != 1 {
		t.Fatalf("Seq after a batch = %d, %d; want 3, 1", a, b)
	}
	ch, err := s.Changes(context.Background(), "a", store.Cursor{Seq: 3}, 100, false) // after every change of seq 2
	must(t, err)
	if len(ch) != 10 {
		t.Fatalf("%d changes after seq 2, want the batch's 10", len(ch))
	}
	for _, c := range ch {
		if c.Seq != 3 {
			t.Fatalf("batch change at seq %d, want 3", c.Seq)
		}
	}
	// A failed write takes no sequence number; a refused Delete neither.
	if err := s.Delete("a", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if ids, err := s.PutVectorsIf("a", map[string][]float32{"1": vec(1, 2)}, func(store.Record) bool { return false }); err != nil || len(ids) != 0 {
		t.Fatalf("PutVectorsIf refused by keep = %v, %v", ids, err)
	}
	if _, err := s.BumpVectorGen("a"); err != nil {
		t.Fatal(err)
	}
	if n := seq(t, s, "a"); n != 3 {
		t.Fatalf("Seq = %d after writes that changed no memory, want 3", n)
	}
	ids, err := s.PutVectorsIf("a", map[string][]float32{"1": vec(1, 2), "2": vec(2, 2), "zz": vec(3, 2)},
		func(r store.Record) bool { return r.Memory.ID == "2" || r.Memory.ID == "1" })
	must(t, err)
	if !slices.Equal(ids, []string{"1", "2"}) {
		t.Fatalf("PutVectorsIf wrote %v", ids)
	}
	ch, err = s.Changes(context.Background(), "a", store.Cursor{Seq: 3, ID: "\xff"}, 100, true)
	must(t, err)
	if len(ch) != 2 || ch[0].Seq != 4 || ch[1].Record.Memory.ID != "2" || !slices.Equal(ch[1].Record.Vector, vec(2, 2)) {
		t.Fatalf("changes after PutVectorsIf: %+v", ch)
	}
	seqs, err := s.Seqs(context.Background(), nil)
	must(t, err)
	if len(seqs) != 2 || seqs["a"] != 4 || seqs["b"] != 1 {
		t.Fatalf("Seqs = %v", seqs)
	}
	seqs, err = s.Seqs(context.Background(), []string{"b", "never"})
	must(t, err)
	if len(seqs) != 1 || seqs["b"] != 1 {
		t.Fatalf("Seqs(b, never) = %v", seqs)
	}
	if _, err := s.Seqs(context.Background(), []string{"../x"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Seqs of an invalid namespace: %v", err)
	}
}

func TestChangesPagingAndTombstones(t *testing.T) {
	s := newStore(t)
	var items []store.Item
	for i := range 25 {
		items = append(items, store.Item{Memory: mem("ns", fmt.Sprintf("m%02d", i), "x"), Vector: vec(i, 3)})
	}
	must(t, s.PutBatch(items))
	must(t, s.Delete("ns", "m07"))
	must(t, s.Put(mem("ns", "m03", "changed"), nil))
	var all []store.Change
	var cur store.Cursor
	for {
		page, err := s.Changes(context.Background(), "ns", cur, 4, true)
		must(t, err)
		all = append(all, page...)
		if len(page) < 4 {
			break
		}
		cur = page[len(page)-1].Cursor()
	}
	if len(all) != 25 {
		t.Fatalf("%d changes, want 25 (each memory once)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].Cursor().Less(all[i].Cursor()) {
			t.Fatalf("changes out of (seq, id) order at %d: %v then %v", i, all[i-1].Cursor(), all[i].Cursor())
		}
	}
	last2 := all[23:]
	if !last2[0].Deleted || last2[0].Seq != 2 || !reflect.DeepEqual(last2[0].Record.Memory, memory.Memory{Namespace: "ns", ID: "m07"}) || last2[0].Record.Vector != nil {
		t.Fatalf("tombstone = %+v", last2[0])
	}
	if last2[1].Deleted || last2[1].Seq != 3 || last2[1].Record.Memory.Text != "changed" || last2[1].Record.Vector != nil {
		t.Fatalf("rewritten memory = %+v", last2[1])
	}
	if !slices.Equal(all[0].Record.Vector, vec(0, 3)) {
		t.Fatalf("vector of the first change: %v", all[0].Record.Vector)
	}
	noVec, err := s.Changes(context.Background(), "ns", store.Cursor{}, 1, false)
	must(t, err)
	if noVec[0].Record.Vector != nil {
		t.Fatal("Changes without vectors returned one")
	}
}

func TestSeqSurvivesEmptyNamespace(t *testing.T) {
	s := newStore(t)
	must(t, s.Put(mem("ns", "a", "x"), vec(1, 2)))
	must(t, s.Put(mem("ns", "b", "x"), nil))
	g, err := s.VectorGen("ns")
	must(t, err)
	if g.Seq != 1 || g.Stamp == 0 {
		t.Fatalf("VectorGen = %v", g)
	}
	must(t, s.Delete("ns", "a"))
	must(t, s.Delete("ns", "b"))
	if n := seq(t, s, "ns"); n != 4 {
		t.Fatalf("Seq after emptying = %d, want 4", n)
	}
	if g, _ := s.VectorGen("ns"); !g.IsZero() {
		t.Fatalf("VectorGen of an empty namespace = %v", g)
	}
	if gens, _ := s.VectorGens(); len(gens) != 0 {
		t.Fatalf("VectorGens = %v", gens)
	}
	if _, err := s.BumpVectorGen("ns"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("BumpVectorGen of an empty namespace: %v", err)
	}
	if nss, _ := s.Namespaces(); len(nss) != 0 {
		t.Fatalf("Namespaces = %v", nss)
	}
	must(t, s.Put(mem("ns", "a", "again"), vec(2, 2)))
	if n := seq(t, s, "ns"); n != 5 {
		t.Fatalf("Seq after refilling = %d, want 5", n)
	}
	if g, _ := s.VectorGen("ns"); g.Seq != 1 {
		t.Fatalf("VectorGen after refilling = %v, want sequence 1 (restarts with the namespace)", g)
	}
	ch, err := s.Changes(context.Background(), "ns", store.Cursor{}, 10, false)
	must(t, err)
	if len(ch) != 2 || !ch[0].Deleted || ch[0].Record.Memory.ID != "b" || ch[1].Deleted || ch[1].Seq != 5 {
		t.Fatalf("changes = %+v", ch)
	}
}

func TestVectorGenRules(t *testing.T) {
	s := newStore(t)
	gen := func() store.VectorGen {
		g, err := s.VectorGen("ns")
		must(t, err)
		return g
	}
	must(t, s.Put(mem("ns", "a", "x"), nil))
	if !gen().IsZero() {
		t.Fatal("a Put without vectors recorded a generation")
	}
	must(t, s.Put(mem("ns", "b", "x"), vec(1, 2)))
	g1 := gen()
	must(t, s.Put(mem("ns", "a", "y"), nil)) // no vector before or after
	if gen() != g1 {
		t.Fatal("a Put that changed no vector moved the generation")
	}
	must(t, s.Put(mem("ns", "b", "y"), nil)) // removes b's vector
	g2 := gen()
	if g2 == g1 || g2.Seq != 2 {
		t.Fatalf("generation after removing a vector = %v (was %v)", g2, g1)
	}
	must(t, s.Delete("ns", "a")) // had no vector
	if gen() != g2 {
		t.Fatal("deleting a memory without a vector moved the generation")
	}
	g3, err := s.BumpVectorGen("ns")
	must(t, err)
	if g3.Seq != 3 || gen() != g3 {
		t.Fatalf("BumpVectorGen = %v, VectorGen = %v", g3, gen())
	}
}

func TestMigrationRace(t *testing.T) {
	url := newDB(t)
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			s, err := Open(url, Options{})
			if err == nil {
				err = s.Ping(context.Background())
				_ = s.Close()
			}
			errs <- err
		}()
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Open: %v", err)
		}
	}
	c := sqlConn(t, url)
	var n int
	var v string
	must(t, c.QueryRow(context.Background(), `SELECT count(*), max(value) FROM rerankd_meta WHERE key = 'schema_version'`).Scan(&n, &v))
	if n != 1 || v != fmt.Sprint(SchemaVersion) {
		t.Fatalf("rerankd_meta has %d schema_version rows, max %q", n, v)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	url := newDB(t)
	s := open(t, url, Options{})
	must(t, s.Ping(context.Background()))
	exec(t, sqlConn(t, url), `UPDATE rerankd_meta SET value = $1 WHERE key = 'schema_version'`, fmt.Sprint(SchemaVersion+1))
	if _, err := Open(url, Options{}); !errors.Is(err, store.ErrIncompatible) {
		t.Fatalf("Open of a newer schema: %v, want ErrIncompatible", err)
	} else {
		t.Log(err)
	}
}

func TestSchemaShape(t *testing.T) {
	url := newDB(t)
	must(t, open(t, url, Options{}).Ping(context.Background()))
	rows, err := sqlConn(t, url).Query(context.Background(), `
		SELECT table_name, column_name, data_type, is_nullable, coalesce(collation_name, '')
		FROM information_schema.columns WHERE table_name LIKE 'rerankd_%' ORDER BY table_name, ordinal_position`)
	must(t, err)
	var got []string
	var a, b, c, d, e string
	_, err = pgx.ForEachRow(rows, []any{&a, &b, &c, &d, &e}, func() error {
		got = append(got, strings.Join([]string{a, b, c, d, e}, " "))
		return nil
	})
	must(t, err)
	want := []string{
		"rerankd_memories ns text NO C",
		"rerankd_memories id text NO C",
		"rerankd_memories seq bigint NO ",
		"rerankd_memories deleted boolean NO ",
		"rerankd_memories memory bytea YES ",
		"rerankd_memories time timestamp with time zone YES ",
		"rerankd_memories vector bytea YES ",
		"rerankd_meta key text NO ",
		"rerankd_meta value text NO ",
		"rerankd_namespaces ns text NO C",
		"rerankd_namespaces seq bigint NO ",
		"rerankd_namespaces live bigint NO ",
		"rerankd_namespaces vecgen_seq bigint NO ",
		"rerankd_namespaces vecgen_stamp bigint NO ",
		"rerankd_namespaces purged bigint NO ",
		"rerankd_snapshot_chunks ns text NO C",
		"rerankd_snapshot_chunks seq bigint NO ",
		"rerankd_snapshot_chunks n integer NO ",
		"rerankd_snapshot_chunks data bytea NO ",
		"rerankd_snapshots ns text NO C",
		"rerankd_snapshots seq bigint NO ",
		"rerankd_snapshots bytes bigint NO ",
		"rerankd_snapshots chunks integer NO ",
		"rerankd_snapshots saved timestamp with time zone NO ",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOddCursors: cursors that PostgreSQL text cannot hold (NUL, bytes
// that are not UTF-8) select what byte order says.
func TestOddCursors(t *testing.T) {
	s := newStore(t)
	for _, id := range []string{"a", "a0", "aZ", "a_", "b"} {
		must(t, s.Put(mem("ns", id, "x"), nil))
	}
	for after, want := range map[string]string{
		"a\x00":  "a0",
		"a\xff":  "b",
		"a_\x80": "b",
		"aZ\x00": "a_",
		"\xc3":   "",
	} {
		recs, _, err := s.Page("ns", after, 1, false)
		must(t, err)
		got := ""
		if len(recs) > 0 {
			got = recs[0].Memory.ID
		}
		if got != want {
			t.Errorf("Page after %q starts at %q, want %q", after, got, want)
		}
		ch, err := s.Changes(context.Background(), "ns", store.Cursor{Seq: 1, ID: after}, 10, false)
		must(t, err)
		if len(ch) != 4 || ch[0].Record.Memory.ID != "a0" { // "a" is (1, "a"), before the cursor
			t.Errorf("Changes after (1, %q): %d, first %+v", after, len(ch), ch)
		}
	}
}
