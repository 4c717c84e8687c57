package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// SharedOpener opens backends shared by several processes. Open returns a
// new, empty backend for one test, registering its cleanup as
// Opener.Open does; Attach, when non-nil, opens a second handle on the
// same data (another process's view: its writes must reach the first
// handle's Feed and Listen), also cleaned up by the opener.
type SharedOpener struct {
	Open   func(t *testing.T, dim int) store.Shared
	Attach func(t *testing.T, s store.Shared) store.Shared // nil: one handle does both sides
}

// sharedBehaviours is the shared suite, in the order RunShared runs it.
var sharedBehaviours = []struct {
	name string
	run  func(t *testing.T, o SharedOpener)
}{
	{"SeqPerTransaction", testSeqPerTransaction},
	{"Seqs", testSeqs},
	{"ChangesLatestState", testChangesLatestState},
	{"ChangesPaging", testChangesPaging},
	{"Listen", testListen},
	{"Snapshots", testSnapshots},
	{"Purge", testPurge},
	{"Ping", testPing},
	{"SharedClosed", testSharedClosed},
}

// RunShared runs every behaviour of store.Shared (the Feed, Listen,
// Snapshots, PurgeTombstones, Ping, and all of them after Close) as
// subtests of t. It does not run the store.Backend suite: call Run too.
func RunShared(t *testing.T, o SharedOpener) {
	t.Helper()
	if o.Open == nil {
		t.Fatal("storetest: SharedOpener.Open is nil")
	}
	for _, b := range sharedBehaviours {
		t.Run(b.name, func(t *testing.T) { b.run(t, o) })
	}
}

func openShared(t *testing.T, o SharedOpener, dim int) store.Shared {
	t.Helper()
	s := o.Open(t, dim)
	if s == nil {
		t.Fatal("storetest: SharedOpener.Open returned nil")
	}
	return s
}

// other is a second handle on s's data, or s itself.
func other(t *testing.T, o SharedOpener, s store.Shared) store.Shared {
	t.Helper()
	if o.Attach == nil {
		return s
	}
	return o.Attach(t, s)
}

func seqOf(t *testing.T, s store.Shared, ns string) uint64 {
	t.Helper()
	n, err := s.Seq(context.Background(), ns)
	if err != nil {
		t.Fatalf("Seq(%q): %v", ns, err)
	}
	return n
}

// allChanges reads every change of ns after the cursor, page by page.
func allChanges(t *testing.T, s store.Shared, ns string, after store.Cursor, page int, withVectors bool) []store.Change {
	t.Helper()
	var out []store.Change
	for {
		ch, err := s.Changes(context.Background(), ns, after, page, withVectors)
		if err != nil {
			t.Fatalf("Changes(%q, %+v): %v", ns, after, err)
		}
		if len(ch) > page {
			t.Fatalf("Changes returned %d changes for a limit of %d", len(ch), page)
		}
		out = append(out, ch...)
		if len(ch) < page {
			return out
		}
		after = ch[len(ch)-1].Cursor()
	}
}

// testSeqPerTransaction: every transaction that changes a namespace's
// memories takes its next sequence number, in each namespace it changes;
// a write that changes nothing takes none.
func testSeqPerTransaction(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 3)
	if n := seqOf(t, s, "never"); n != 0 {
		t.Fatalf("Seq of a namespace never written = %d, want 0", n)
	}
	put(t, s, mem("a", "1"), vec(1, 3))
	put(t, s, mem("a", "2"), nil)
	if n := seqOf(t, s, "a"); n != 2 {
		t.Fatalf("Seq after two Puts = %d, want 2", n)
	}
	putBatch(t, s, []store.Item{{Memory: mem("a", "3")}, {Memory: mem("b", "1")}, {Memory: mem("a", "4")}})
	if a, b := seqOf(t, s, "a"), seqOf(t, s, "b"); a != 3 || b != 1 {
		t.Fatalf("Seq after one batch over two namespaces = %d, %d; want 3, 1", a, b)
	}
	if err := s.Delete("a", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Delete of a missing memory: %v", err)
	}
	if err := s.PutBatch([]store.Item{{Memory: mem("a", "5")}, {Memory: mem("a", "../bad")}}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("PutBatch with an invalid item: %v", err)
	}
	if n := seqOf(t, s, "a"); n != 3 {
		t.Fatalf("Seq = %d after writes that changed nothing, want 3", n)
	}
	if err := s.Delete("a", "1"); err != nil {
		t.Fatal(err)
	}
	if n := seqOf(t, s, "a"); n != 4 {
		t.Fatalf("Seq after a Delete = %d, want 4", n)
	}
	if _, err := s.Seq(context.Background(), "../x"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Seq of an invalid namespace: %v", err)
	}
}

// testSeqs: Seqs reads the asked namespaces' sequences (absent: never
// written), or every namespace's with nil.
func testSeqs(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	put(t, s, mem("a", "1"), nil)
	put(t, s, mem("a", "2"), nil)
	put(t, s, mem("b", "1"), nil)
	ctx := context.Background()
	all, err := s.Seqs(ctx, nil)
	if err != nil || len(all) != 2 || all["a"] != 2 || all["b"] != 1 {
		t.Fatalf("Seqs(nil) = %v, %v; want a:2 b:1", all, err)
	}
	some, err := s.Seqs(ctx, []string{"b", "never"})
	if err != nil || len(some) != 1 || some["b"] != 1 {
		t.Fatalf("Seqs(b, never) = %v, %v; want b:1 only", some, err)
	}
	if _, err := s.Seqs(ctx, []string{"../x"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Seqs of an invalid namespace: %v", err)
	}
}

// testChangesLatestState: each changed memory comes once, in its latest
// state (with its vector only when asked), a deleted one as a tombstone
// with only its namespace and ID; the changes are in (Seq, ID) order and
// each carries the sequence of the write that made its state.
func testChangesLatestState(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 3)
	w := other(t, o, s)
	put(t, w, mem("n", "b"), vec(1, 3)) // 1
	put(t, w, mem("n", "a"), vec(2, 3)) // 2
	put(t, w, mem("n", "c"), nil)       // 3
	again := mem("n", "b")
	again.Text = "b rewritten"
	put(t, w, again, vec(3, 3)) // 4
	if err := w.Delete("n", "c"); err != nil {
		t.Fatal(err) // 5
	}
	put(t, w, mem("other", "x"), nil)
	want := []struct {
		seq     uint64
		id      string
		deleted bool
	}{{2, "a", false}, {4, "b", false}, {5, "c", true}}
	for _, withVectors := range []bool{false, true} {
		ch := allChanges(t, s, "n", store.Cursor{}, store.MaxPage, withVectors)
		if len(ch) != len(want) {
			t.Fatalf("withVectors %v: %d changes, want %d: %+v", withVectors, len(ch), len(want), ch)
		}
		for i, c := range ch {
			wc := want[i]
			if c.Seq != wc.seq || c.Record.Memory.ID != wc.id || c.Deleted != wc.deleted || c.Record.Memory.Namespace != "n" {
				t.Fatalf("withVectors %v: change %d = seq %d %s deleted %v, want seq %d %s deleted %v",
					withVectors, i, c.Seq, c.Record.Memory.ID, c.Deleted, wc.seq, wc.id, wc.deleted)
			}
		}
		equalMem(t, ch[1].Record.Memory, again)
		equalMem(t, ch[0].Record.Memory, mem("n", "a"))
		if tomb := ch[2].Record; tomb.Memory.Text != "" || tomb.Vector != nil {
			t.Fatalf("tombstone carries more than its keys: %+v", tomb)
		}
		if withVectors {
			equalVec(t, ch[0].Record.Vector, vec(2, 3))
			equalVec(t, ch[1].Record.Vector, vec(3, 3))
		} else if ch[0].Record.Vector != nil || ch[1].Record.Vector != nil {
			t.Fatal("vectors returned without withVectors")
		}
	}
	// After a cursor: only the later changes.
	ch := allChanges(t, s, "n", store.Cursor{Seq: 4, ID: "b"}, 10, false)
	if len(ch) != 1 || ch[0].Record.Memory.ID != "c" {
		t.Fatalf("changes after (4, b): %+v", ch)
	}
}

// testChangesPaging: a batch's changes share one sequence number, and
// paging by each page's last cursor reads every change exactly once,
// whatever the limit.
func testChangesPaging(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	var items []store.Item
	var ids []string
	for i := range 25 {
		id := fmt.Sprintf("m%02d", i)
		items = append(items, store.Item{Memory: mem("n", id)})
		ids = append(ids, id)
	}
	putBatch(t, s, items)
	put(t, s, mem("n", "z"), nil)
	ids = append(ids, "z")
	for _, page := range []int{1, 2, 7, 25, 26, store.MaxPage} {
		ch := allChanges(t, s, "n", store.Cursor{}, page, false)
		got := make([]string, len(ch))
		for i, c := range ch {
			got[i] = c.Record.Memory.ID
			if want := uint64(1); i < 25 && c.Seq != want {
				t.Fatalf("page %d: batch change %s at seq %d, want 1", page, c.Record.Memory.ID, c.Seq)
			}
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("page %d: changes %v, want %v", page, got, ids)
		}
	}
	for _, limit := range []int{0, -1, store.MaxPage + 1} {
		if _, err := s.Changes(context.Background(), "n", store.Cursor{}, limit, false); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Changes with limit %d: %v, want ErrInvalid", limit, err)
		}
	}
}

// testListen: Listen calls fn with the namespace soon after each commit
// that changed it, made through another handle, and returns ctx's error
// once ctx ends.
func testListen(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	w := other(t, o, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 1000)
	ended := make(chan error, 1)
	go func() { ended <- s.Listen(ctx, func(ns string) { got <- ns }) }()
	// Listen may not be listening yet: write until it hears.
	deadline := time.After(20 * time.Second)
	for i := 0; ; i++ {
		put(t, w, mem("heard", fmt.Sprint("m", i)), nil)
		select {
		case ns := <-got:
			if ns != "heard" {
				t.Fatalf("notified of %q, want heard", ns)
			}
		case <-time.After(100 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatal("no notification within 20 s")
		}
		break
	}
	time.Sleep(100 * time.Millisecond) // the notifications of the retries
	for len(got) > 0 {
		<-got
	}
	putBatch(t, w, []store.Item{{Memory: mem("n1", "a")}, {Memory: mem("n2", "a")}})
	heard := map[string]bool{}
	for len(heard) < 2 {
		select {
		case ns := <-got:
			heard[ns] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("heard %v after a batch over n1 and n2", heard)
		}
	}
	if len(heard) != 2 || !heard["n1"] || !heard["n2"] {
		t.Fatalf("heard %v after a batch over n1 and n2", heard)
	}
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Listen after its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after its context ended")
	}
}

// testSnapshots: one snapshot per namespace, replaced only by a later
// sequence, read back byte for byte with its sequence; read's and write's
// errors come back as they are; DeleteSnapshot removes it.
func testSnapshots(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	ctx := context.Background()
	read := func(ns string) (uint64, []byte, error) {
		var seq uint64
		var body []byte
		err := s.Snapshot(ctx, ns, func(at uint64, r io.Reader) error {
			b, err := io.ReadAll(r)
			seq, body = at, b
			return err
		})
		return seq, body, err
	}
	putSnap := func(ns string, seq uint64, body []byte) bool {
		t.Helper()
		ok, err := s.PutSnapshot(ctx, ns, seq, func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		})
		if err != nil {
			t.Fatalf("PutSnapshot(%q, %d): %v", ns, seq, err)
		}
		return ok
	}
	if n, err := s.SnapshotSeq(ctx, "n"); err != nil || n != 0 {
		t.Fatalf("SnapshotSeq with none = %d, %v; want 0", n, err)
	}
	if _, _, err := read("n"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Snapshot with none: %v, want ErrNotFound", err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 1<<16) // > 1 MiB, with NUL and 0xff
	if !putSnap("n", 5, big) {
		t.Fatal("PutSnapshot of a first snapshot wrote nothing")
	}
	if seq, body, err := read("n"); err != nil || seq != 5 || !bytes.Equal(body, big) {
		t.Fatalf("Snapshot = seq %d, %d bytes, %v; want seq 5, %d bytes", seq, len(body), err, len(big))
	}
	if n, err := s.SnapshotSeq(ctx, "n"); err != nil || n != 5 {
		t.Fatalf("SnapshotSeq = %d, %v; want 5", n, err)
	}
	for _, seq := range []uint64{5, 4} {
		if putSnap("n", seq, []byte("older")) {
			t.Fatalf("PutSnapshot at %d over a snapshot at 5 wrote", seq)
		}
	}
	if !putSnap("n", 7, []byte("newer")) {
		t.Fatal("PutSnapshot at 7 over 5 wrote nothing")
	}
	if seq, body, err := read("n"); err != nil || seq != 7 || string(body) != "newer" {
		t.Fatalf("after a newer PutSnapshot: seq %d %q %v", seq, body, err)
	}
	if n, err := s.SnapshotSeq(ctx, "other"); err != nil || n != 0 {
		t.Fatalf("another namespace's SnapshotSeq = %d, %v; want 0", n, err)
	}
	boom := errors.New("boom")
	if err := s.Snapshot(ctx, "n", func(uint64, io.Reader) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Snapshot with a failing read: %v, want read's error", err)
	}
	if ok, err := s.PutSnapshot(ctx, "n", 9, func(io.Writer) error { return boom }); ok || !errors.Is(err, boom) {
		t.Fatalf("PutSnapshot with a failing write: %v %v, want write's error", ok, err)
	}
	if seq, body, err := read("n"); err != nil || seq != 7 || string(body) != "newer" {
		t.Fatalf("after a failed PutSnapshot: seq %d %q %v; want the old one", seq, body, err)
	}
	if err := s.DeleteSnapshot(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := read("n"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Snapshot after DeleteSnapshot: %v, want ErrNotFound", err)
	}
	if n, err := s.SnapshotSeq(ctx, "n"); err != nil || n != 0 {
		t.Fatalf("SnapshotSeq after DeleteSnapshot = %d, %v", n, err)
	}
	if err := s.DeleteSnapshot(ctx, "n"); err != nil {
		t.Fatalf("DeleteSnapshot of none: %v", err)
	}
	if _, err := s.SnapshotSeq(ctx, "../x"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("SnapshotSeq of an invalid namespace: %v", err)
	}
}

// testPurge: tombstones older than the time go, after which a cursor
// that has not seen them is ErrStale and one past them reads on; live
// memories are untouched, and a purged ID can be written again.
func testPurge(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	ctx := context.Background()
	putBatch(t, s, []store.Item{{Memory: mem("n", "a")}, {Memory: mem("n", "b")}, {Memory: mem("n", "c")}}) // 1
	for _, id := range []string{"a", "b"} {
		if err := s.Delete("n", id); err != nil { // 2, 3
			t.Fatal(err)
		}
	}
	if n, err := s.PurgeTombstones(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("purging tombstones older than an hour: %d, %v; want 0", n, err)
	}
	if ch := allChanges(t, s, "n", store.Cursor{Seq: 2}, 10, false); len(ch) != 2 || !ch[0].Deleted || !ch[1].Deleted {
		t.Fatalf("tombstones before the purge: %+v", ch)
	}
	if n, err := s.PurgeTombstones(ctx, time.Now().Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("purging every tombstone: %d, %v; want 2", n, err)
	}
	for _, c := range []store.Cursor{{}, {Seq: 2}, {Seq: 3, ID: "a"}} {
		if _, err := s.Changes(ctx, "n", c, 10, false); !errors.Is(err, store.ErrStale) {
			t.Fatalf("Changes after %+v, before purged deletes: %v, want ErrStale", c, err)
		}
	}
	if ch, err := s.Changes(ctx, "n", store.Cursor{Seq: 4}, 10, false); err != nil || len(ch) != 0 {
		t.Fatalf("Changes past the purged deletes: %+v, %v", ch, err)
	}
	if n, err := s.Count("n"); err != nil || n != 1 {
		t.Fatalf("Count after the purge = %d, %v; want 1", n, err)
	}
	put(t, s, mem("n", "a"), nil) // 4
	if ch, err := s.Changes(ctx, "n", store.Cursor{Seq: 4}, 10, false); err != nil || len(ch) != 1 || ch[0].Record.Memory.ID != "a" || ch[0].Deleted {
		t.Fatalf("Changes after writing a purged ID again: %+v, %v", ch, err)
	}
	if n, err := s.PurgeTombstones(ctx, time.Now().Add(time.Second)); err != nil || n != 0 {
		t.Fatalf("a second purge: %d, %v; want 0", n, err)
	}
}

// testPing: an open backend answers.
func testPing(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping of an open backend: %v", err)
	}
}

// testSharedClosed: after Close every shared method fails with ErrClosed
// (Listen included, also one running when Close came) and calls no
// callback.
func testSharedClosed(t *testing.T, o SharedOpener) {
	s := openShared(t, o, 0)
	put(t, s, mem("n", "a"), nil)
	ctx := context.Background()
	running := make(chan error, 1)
	go func() { running <- s.Listen(ctx, func(string) {}) }()
	time.Sleep(200 * time.Millisecond) // let it start listening
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-running:
		wantErr(t, "a running Listen, after Close", err, store.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("a running Listen did not return after Close")
	}
	called := false
	for _, c := range []struct {
		what string
		err  func() error
	}{
		{"Seq", func() error { _, err := s.Seq(ctx, "n"); return err }},
		{"Seqs", func() error { _, err := s.Seqs(ctx, nil); return err }},
		{"Changes", func() error { _, err := s.Changes(ctx, "n", store.Cursor{}, 10, false); return err }},
		{"Listen", func() error { return s.Listen(ctx, func(string) { called = true }) }},
		{"SnapshotSeq", func() error { _, err := s.SnapshotSeq(ctx, "n"); return err }},
		{"PutSnapshot", func() error {
			_, err := s.PutSnapshot(ctx, "n", 1, func(io.Writer) error { called = true; return nil })
			return err
		}},
		{"Snapshot", func() error {
			return s.Snapshot(ctx, "n", func(uint64, io.Reader) error { called = true; return nil })
		}},
		{"DeleteSnapshot", func() error { return s.DeleteSnapshot(ctx, "n") }},
		{"PurgeTombstones", func() error { _, err := s.PurgeTombstones(ctx, time.Now()); return err }},
		{"Ping", func() error { return s.Ping(ctx) }},
	} {
		wantErr(t, c.what+" after Close", c.err(), store.ErrClosed)
	}
	if called {
		t.Error("a callback ran after Close")
	}
}
