package pgstore

import (
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// TestSchemaOneRecord: a memory row holding the exact JSON the build
// before typed metadata wrote (schema version 1, string metadata) reads
// back unchanged, and a typed write beside it round-trips.
func TestSchemaOneRecord(t *testing.T) {
	url := newDB(t)
	s := open(t, url, Options{})
	must(t, s.Put(mem("alice", "m1", "placeholder"), nil))
	old := `{"id":"m1","namespace":"alice","text":"Alice moved to Paris","time":"2025-05-01T09:00:00+02:00","source":"chat","metadata":{"kind":"fact","n":"5"},"schema_version":1}`
	exec(t, sqlConn(t, url), `UPDATE rerankd_memories SET memory = $1 WHERE ns = 'alice' AND id = 'm1'`, []byte(old))
	got, err := s.Get("alice", "m1")
	must(t, err)
	if got.SchemaVersion != 1 || got.Text != "Alice moved to Paris" || got.Metadata["kind"] != memory.String("fact") ||
		got.Metadata["n"] != memory.String("5") || len(got.Metadata) != 2 {
		t.Fatalf("old record read as %+v", got)
	}
	typed := mem("alice", "m2", "typed")
	typed.Metadata = memory.Metadata{"n": memory.Number(5), "ok": memory.Bool(false), "s": memory.String("5")}
	must(t, s.Put(typed, nil))
	got, err = s.Get("alice", "m2")
	must(t, err)
	if got.Metadata["n"] != memory.Number(5) || got.Metadata["ok"] != memory.Bool(false) || got.Metadata["s"] != memory.String("5") {
		t.Fatalf("typed metadata read as %v", got.Metadata)
	}
}
