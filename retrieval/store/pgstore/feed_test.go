package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// follower applies a namespace's changes as an index would.
type follower struct {
	ns    string
	cur   store.Cursor
	state map[string]string // id → text
}

// catchUp reads Seq, then applies Changes until they run out, and
// returns the Seq it read: every write acknowledged before the call is
// then in f.state.
func (f *follower) catchUp(t *testing.T, s *Store, page int) uint64 {
	t.Helper()
	target := seq(t, s, f.ns)
	for {
		ch, err := s.Changes(context.Background(), f.ns, f.cur, page, false)
		must(t, err)
		for _, c := range ch {
			if !f.cur.Less(c.Cursor()) {
				t.Fatalf("change %v not after the cursor %v", c.Cursor(), f.cur)
			}
			if c.Deleted {
				delete(f.state, c.Record.Memory.ID)
			} else {
				f.state[c.Record.Memory.ID] = c.Record.Memory.Text
			}
			f.cur = c.Cursor()
		}
		if len(ch) < page {
			return target
		}
	}
}

// TestCommitOrder: writers with pools of their own (as other processes)
// write one namespace concurrently (puts, batches, deletes); a follower
// that catches up after a write was acknowledged always has it (or a
// later write of that ID), and ends with exactly the stored state.
func TestCommitOrder(t *testing.T) {
	url := newDB(t)
	reader := open(t, url, Options{})
	const writers, opsEach = 6, 60
	// Every write of an ID (put or delete) has the next version of that
	// ID; a memory's text holds its version.
	var mu sync.Mutex
	acked := map[string]int{}      // id → version of its last acknowledged put
	deleteFrom := map[string]int{} // id → version of its last delete issued
	var wg sync.WaitGroup
	for w := range writers {
		s := open(t, url, Options{MaxConns: 2})
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			version := map[string]int{}
			live := map[string]bool{}
			for range opsEach {
				id := fmt.Sprintf("w%d-%d", w, rng.IntN(8)) // each writer owns its IDs
				var err error
				puts := map[string]int{}
				switch r := rng.IntN(10); {
				case r < 2:
					if !live[id] {
						continue
					}
					version[id]++
					mu.Lock()
					deleteFrom[id] = version[id]
					mu.Unlock()
					err = s.Delete("ns", id)
					live[id] = false
				case r < 4:
					var items []store.Item
					for k := range 5 {
						bid := fmt.Sprintf("w%d-%d", w, (rng.IntN(8)+k)%8)
						if _, dup := puts[bid]; dup {
							continue
						}
						version[bid]++
						puts[bid] = version[bid]
						live[bid] = true
						items = append(items, store.Item{Memory: mem("ns", bid, fmt.Sprintf("%s v%d", bid, version[bid]))})
					}
					err = s.PutBatch(items)
				default:
					version[id]++
					puts[id] = version[id]
					live[id] = true
					err = s.Put(mem("ns", id, fmt.Sprintf("%s v%d", id, version[id])), nil)
				}
				if err != nil {
					if !errors.Is(err, store.ErrClosed) { // closed: the test failed and ended
						t.Errorf("writer %d: %v", w, err)
					}
					return
				}
				mu.Lock()
				for id, v := range puts {
					acked[id] = v
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	f := &follower{ns: "ns", state: map[string]string{}}
	rounds := 0
	for finished := false; !finished; rounds++ {
		select {
		case <-done:
			finished = true
		default:
		}
		mu.Lock()
		before := maps.Clone(acked)
		mu.Unlock()
		f.catchUp(t, reader, 7)
		mu.Lock()
		deleted := maps.Clone(deleteFrom)
		mu.Unlock()
		for id, v := range before {
			text, ok := f.state[id]
			got := -1
			if ok {
				_, _ = fmt.Sscanf(text[len(id)+1:], "v%d", &got)
			}
			if (ok && got < v) || (!ok && deleted[id] < v) {
				t.Fatalf("round %d: %s acknowledged at v%d, follower has %q (present %v; last delete issued v%d)",
					rounds, id, v, text, ok, deleted[id])
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if t.Failed() {
		return
	}
	f.catchUp(t, reader, 7)
	want := map[string]string{}
	must(t, reader.List("ns", func(m memory.Memory) error { want[m.ID] = m.Text; return nil }))
	if !maps.Equal(f.state, want) {
		t.Fatalf("follower state (%d) differs from the store (%d):\n got %v\nwant %v", len(f.state), len(want), f.state, want)
	}
	if n, err := reader.Count("ns"); err != nil || n != len(want) {
		t.Fatalf("Count = %d, %v; the store lists %d", n, err, len(want))
	}
	t.Logf("%d catch-up rounds, %d memories at the end, seq %d", rounds, len(want), seq(t, reader, "ns"))
}

func TestListen(t *testing.T) {
	url := newDB(t)
	listener, writer := open(t, url, Options{}), open(t, url, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 100)
	ended := make(chan error, 1)
	go func() { ended <- listener.Listen(ctx, func(ns string) { got <- ns }) }()
	// The listener may not be listening yet: write until it hears.
	deadline := time.After(20 * time.Second)
	for i := 0; ; i++ {
		must(t, writer.Put(mem("heard", fmt.Sprint(i), "x"), nil))
		select {
		case ns := <-got:
			if ns != "heard" {
				t.Fatalf("notified of %q", ns)
			}
		case <-time.After(100 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatal("no notification within 20 s")
		}
		break
	}
	// A batch over two namespaces notifies both; a rolled-back write
	// (a Delete that finds nothing) notifies none.
	for len(got) > 0 {
		<-got
	}
	must(t, writer.PutBatch([]store.Item{{Memory: mem("n1", "a", "x")}, {Memory: mem("n2", "a", "x")}}))
	_ = writer.Delete("n3", "missing")
	heard := map[string]bool{}
	for len(heard) < 2 {
		select {
		case ns := <-got:
			heard[ns] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("heard %v, want n1 and n2", heard)
		}
	}
	if heard["n3"] || heard["heard"] && len(heard) > 2 {
		t.Fatalf("heard %v", heard)
	}
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Listen after cancel returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after cancel")
	}
	// Close ends a running Listen with ErrClosed.
	go func() { ended <- listener.Listen(context.Background(), func(string) {}) }()
	time.Sleep(200 * time.Millisecond)
	must(t, listener.Close())
	select {
	case err := <-ended:
		if !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Listen after Close returned %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after Close")
	}
}
