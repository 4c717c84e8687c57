package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// TestPurgeTombstones: old tombstones go, the namespace's horizon rises to
// the highest sequence purged, a cursor below it is ErrStale (its holder
// may have missed a delete), one at or past it reads on; live memories and
// counts are untouched, and a purged ID can be written again.
func TestPurgeTombstones(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	must(t, s.PutBatch([]store.Item{{Memory: mem("ns", "a", "x")}, {Memory: mem("ns", "b", "y")}, {Memory: mem("ns", "c", "z")}})) // seq 1
	must(t, s.Delete("ns", "a"))                                                                                                   // seq 2
	must(t, s.Delete("ns", "b"))                                                                                                   // seq 3
	ch, err := s.Changes(ctx, "ns", store.Cursor{Seq: 2}, 10, false)
	must(t, err)
	if len(ch) != 2 || !ch[0].Deleted || !ch[1].Deleted {
		t.Fatalf("tombstones before the purge: %+v", ch)
	}
	if n, err := s.PurgeTombstones(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("purging tombstones older than an hour: %d %v", n, err)
	}
	if n, err := s.PurgeTombstones(ctx, time.Now().Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("purging every tombstone: %d %v", n, err)
	}
	if _, err := s.Changes(ctx, "ns", store.Cursor{Seq: 2}, 10, false); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a cursor that has not seen the purged deletes: %v", err)
	}
	if _, err := s.Changes(ctx, "ns", store.Cursor{Seq: 3, ID: "a"}, 10, false); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a cursor in the middle of the last purged sequence: %v", err)
	}
	ch, err = s.Changes(ctx, "ns", store.Cursor{Seq: 4}, 10, false) // past every change of seq 3
	if err != nil || len(ch) != 0 {
		t.Fatalf("a cursor past the horizon: %+v %v", ch, err)
	}
	if n, err := s.Count("ns"); err != nil || n != 1 {
		t.Fatalf("count after the purge: %d %v", n, err)
	}
	must(t, s.Put(mem("ns", "a", "again"), nil)) // seq 4
	ch, err = s.Changes(ctx, "ns", store.Cursor{Seq: 4}, 10, false)
	if err != nil || len(ch) != 1 || ch[0].Record.Memory.Text != "again" {
		t.Fatalf("changes after writing a purged ID again: %+v %v", ch, err)
	}
	if n, err := s.Count("ns"); err != nil || n != 2 {
		t.Fatalf("count after writing a purged ID again: %d %v", n, err)
	}
	// Namespaces without tombstones keep the zero horizon: any cursor reads.
	must(t, s.Put(mem("other", "x", "y"), nil))
	if _, err := s.Changes(ctx, "other", store.Cursor{}, 10, false); err != nil {
		t.Fatalf("a namespace never purged: %v", err)
	}
}
