package pgstore

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// TestCheckDamage: rows damaged behind the Store's back are each reported
// with their kind; reads of them fail with ErrCorrupt naming them.
func TestCheckDamage(t *testing.T) {
	url := newDB(t)
	s := open(t, url, Options{})
	var items []store.Item
	for _, id := range []string{"badjson", "moved", "invalid", "nanvec", "shortvec", "ok", "tomb"} {
		items = append(items, store.Item{Memory: mem("ns", id, "text "+id), Vector: vec(1, 2)})
	}
	must(t, s.PutBatch(items))
	must(t, s.Put(mem("counted", "a", "x"), nil))
	must(t, s.Delete("ns", "tomb"))
	st, err := s.Check(func(p store.Problem) { t.Errorf("healthy store: %v", p) })
	must(t, err)
	if st != (store.CheckStats{Namespaces: 2, Memories: 7, Vectors: 6}) {
		t.Fatalf("healthy stats = %+v", st)
	}

	c := sqlConn(t, url)
	nan := encodeVector([]float32{1, float32(math.NaN())})
	exec(t, c, `UPDATE rerankd_memories SET memory = 'not json' WHERE id = 'badjson'`)
	exec(t, c, `UPDATE rerankd_memories SET memory = (SELECT memory FROM rerankd_memories WHERE id = 'ok') WHERE id = 'moved'`)
	exec(t, c, `UPDATE rerankd_memories SET memory = convert_to(replace(convert_from(memory, 'UTF8'), '"text invalid"', '""'), 'UTF8') WHERE id = 'invalid'`)
	exec(t, c, `UPDATE rerankd_memories SET vector = $1 WHERE id = 'nanvec'`, nan)
	exec(t, c, `UPDATE rerankd_memories SET vector = '\x010203' WHERE id = 'shortvec'`)
	exec(t, c, `UPDATE rerankd_memories SET vector = '\x0000803f' WHERE id = 'tomb'`)
	exec(t, c, `UPDATE rerankd_namespaces SET live = 5 WHERE ns = 'counted'`)
	exec(t, c, `INSERT INTO rerankd_namespaces (ns, vecgen_seq, vecgen_stamp) VALUES ('ghost', 3, 7)`)

	var got []string
	var total, done int64
	st, err = s.CheckProgress(func(p store.Problem) {
		got = append(got, p.Kind+" "+p.Namespace+"/"+p.ID)
		if !errors.Is(p.Err, store.ErrCorrupt) && !errors.Is(p.Err, store.ErrInvalid) {
			t.Errorf("problem %v wraps neither ErrCorrupt nor ErrInvalid", p)
		}
	}, func(d, tot int64) { done, total = d, tot })
	must(t, err)
	slices.Sort(got)
	want := []string{
		"memory ns/badjson", "memory ns/invalid", "memory ns/moved",
		"namespace counted/", "orphan-vector ns/tomb",
		"vecgen ghost/", "vector ns/nanvec", "vector ns/shortvec",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems\n%q\nwant\n%q", got, want)
	}
	if st.Problems != len(want) || st.Memories != 7 || done != total || done != 13 {
		t.Fatalf("stats %+v, progress %d/%d", st, done, total)
	}
	for _, id := range []string{"badjson", "moved"} {
		if _, err := s.Get("ns", id); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "ns/"+id) {
			t.Errorf("Get of damaged %s: %v, want ErrCorrupt naming it", id, err)
		}
	}
	if _, err := s.Vector("ns", "shortvec"); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Vector of a damaged vector: %v", err)
	}
	// PutVectorsIf skips a memory that does not decode, and replaces a
	// damaged vector (keep sees none).
	ids, err := s.PutVectorsIf("ns", map[string][]float32{"badjson": vec(2, 2), "shortvec": vec(2, 2)},
		func(r store.Record) bool { return r.Vector == nil })
	must(t, err)
	if !slices.Equal(ids, []string{"shortvec"}) {
		t.Fatalf("PutVectorsIf over damage wrote %v", ids)
	}
}
