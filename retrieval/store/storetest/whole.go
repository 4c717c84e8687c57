package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// testCheckProgress: on a healthy store CheckProgress reports no problem,
// counts namespaces, memories and vectors, and reports progress with a
// fixed total, done never going back, ending at done == total.
func testCheckProgress(t *testing.T, o Opener) {
	cases := []struct {
		name            string
		spaces, perNS   int
		withVectorEvery int // every k-th memory has a vector (0: none)
	}{
		{"empty", 0, 0, 0},
		{"one namespace, no vectors", 1, 10, 0},
		{"several, many records", 3, 900, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := open(t, o, 4)
			want := store.CheckStats{Namespaces: tc.spaces}
			for n := range tc.spaces {
				var batch []store.Item
				for i := range tc.perNS {
					it := store.Item{Memory: mem(fmt.Sprintf("ns%d", n), fmt.Sprintf("m%04d", i))}
					want.Memories++
					if tc.withVectorEvery > 0 && i%tc.withVectorEvery == 0 {
						it.Vector = vec(i, 4)
						want.Vectors++
					}
					batch = append(batch, it)
				}
				putBatch(t, b, batch)
			}
			var calls [][2]int64
			st, err := b.CheckProgress(func(p store.Problem) { t.Errorf("problem on a healthy store: %v", p) },
				func(done, total int64) { calls = append(calls, [2]int64{done, total}) })
			if err != nil {
				t.Fatal(err)
			}
			if st != want {
				t.Fatalf("CheckProgress = %+v, want %+v", st, want)
			}
			if len(calls) == 0 {
				t.Fatal("no progress call")
			}
			last := calls[len(calls)-1]
			if last[0] != last[1] || last[1] < int64(want.Memories) {
				t.Fatalf("last progress call %v: want done == total, at least the %d memories", last, want.Memories)
			}
			for i, c := range calls {
				if c[1] != last[1] || c[0] > c[1] || c[0] < 0 || (i > 0 && c[0] < calls[i-1][0]) {
					t.Errorf("call %d: %v (want total %d throughout, done not going back)", i, c, last[1])
				}
			}
			if plain, err := b.CheckProgress(nil, nil); err != nil || plain != st {
				t.Fatalf("CheckProgress(nil, nil) = %+v, %v; want %+v", plain, err, st)
			}
		})
	}
}

// testConcurrency: goroutines writing different namespaces and the same
// namespace (also the same IDs), while others read, lose nothing; every
// memory keeps the vector written with it; each namespace's generation
// moved once per transaction that changed its vectors.
func testConcurrency(t *testing.T, o Opener) {
	const (
		own     = 4  // writers of their own namespace
		shared  = 4  // writers of distinct IDs in one namespace
		same    = 3  // writers of the same IDs in that namespace
		perW    = 15 // Puts per writer
		sameIDs = 8
		fills   = 8 // back-filled memories (Put without vector, then PutVectorsIf)
	)
	b := open(t, o, 4)
	// A memory's text names the seed of its vector, so a record whose
	// vector came from another write than its text is caught.
	m := func(ns, id string, seed int) memory.Memory {
		x := mem(ns, id)
		x.Text = fmt.Sprintf("seed %d", seed)
		return x
	}
	var writers, readers sync.WaitGroup
	done := make(chan struct{})
	for w := range own {
		writers.Go(func() {
			ns := fmt.Sprintf("own%d", w)
			for i := range perW {
				seed := w*1000 + i
				if err := b.Put(m(ns, fmt.Sprintf("m%02d", i), seed), vec(seed, 4)); err != nil {
					t.Errorf("Put %s: %v", ns, err)
					return
				}
			}
			var batch []store.Item
			for i := perW; i < perW+5; i++ {
				seed := w*1000 + i
				batch = append(batch, store.Item{Memory: m(ns, fmt.Sprintf("m%02d", i), seed), Vector: vec(seed, 4)})
			}
			if err := b.PutBatch(batch); err != nil {
				t.Errorf("PutBatch %s: %v", ns, err)
			}
			for _, id := range []string{"m00", "m03"} {
				if err := b.Delete(ns, id); err != nil {
					t.Errorf("Delete %s/%s: %v", ns, id, err)
				}
			}
		})
	}
	for w := range shared {
		writers.Go(func() {
			for i := range perW {
				seed := 100000 + w*1000 + i
				if err := b.Put(m("shared", fmt.Sprintf("w%d-%02d", w, i), seed), vec(seed, 4)); err != nil {
					t.Errorf("Put shared: %v", err)
					return
				}
			}
		})
	}
	for w := range same {
		writers.Go(func() {
			for i := range sameIDs {
				seed := 200000 + w*1000 + i
				if err := b.Put(m("shared", fmt.Sprintf("same-%d", i), seed), vec(seed, 4)); err != nil {
					t.Errorf("Put shared/same: %v", err)
					return
				}
			}
		})
	}
	writers.Go(func() {
		for i := range fills {
			seed := 300000 + i
			id := fmt.Sprintf("fill-%d", i)
			if err := b.Put(m("shared", id, seed), nil); err != nil {
				t.Errorf("Put shared/%s: %v", id, err)
				return
			}
			w, err := b.PutVectorsIf("shared", map[string][]float32{id: vec(seed, 4)}, func(r store.Record) bool {
				return r.Vector == nil && r.Memory.Text == fmt.Sprintf("seed %d", seed)
			})
			if err != nil || !slices.Equal(w, []string{id}) {
				t.Errorf("PutVectorsIf shared/%s = %v, %v", id, w, err)
			}
		}
	})
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := b.ForEach(func(r store.Record) error {
					var seed int
					if _, err := fmt.Sscanf(r.Memory.Text, "seed %d", &seed); err != nil {
						return fmt.Errorf("%s/%s: text %q", r.Memory.Namespace, r.Memory.ID, r.Memory.Text)
					}
					if r.Vector != nil && !sameVec(r.Vector, vec(seed, 4)) {
						return fmt.Errorf("%s/%s: the vector of another write than its text", r.Memory.Namespace, r.Memory.ID)
					}
					return nil
				}); err != nil {
					t.Errorf("ForEach while writing: %v", err)
					return
				}
				if _, err := b.Count("shared"); err != nil {
					t.Errorf("Count while writing: %v", err)
					return
				}
				if _, _, err := b.Page("shared", "", 7, true); err != nil {
					t.Errorf("Page while writing: %v", err)
					return
				}
				if _, err := b.VectorGens(); err != nil {
					t.Errorf("VectorGens while writing: %v", err)
					return
				}
				if _, err := b.Namespaces(); err != nil {
					t.Errorf("Namespaces while writing: %v", err)
					return
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		t.FailNow()
	}

	for w := range own {
		ns := fmt.Sprintf("own%d", w)
		if n := count(t, b, ns); n != perW+5-2 {
			t.Errorf("Count(%s) = %d, want %d", ns, n, perW+5-2)
		}
		// perW Puts, one batch and two deletes changed its vectors.
		if g := gen(t, b, ns); g.Seq != perW+1+2 {
			t.Errorf("%s: generation %v, want Seq %d", ns, g, perW+1+2)
		}
	}
	if n := count(t, b, "shared"); n != shared*perW+sameIDs+fills {
		t.Errorf("Count(shared) = %d, want %d", n, shared*perW+sameIDs+fills)
	}
	if g := gen(t, b, "shared"); g.Seq != shared*perW+same*sameIDs+fills {
		t.Errorf("shared: generation %v, want Seq %d (one per vector write)", g, shared*perW+same*sameIDs+fills)
	}
	total := 0
	if err := b.ForEach(func(r store.Record) error {
		total++
		var seed int
		if _, err := fmt.Sscanf(r.Memory.Text, "seed %d", &seed); err != nil {
			return fmt.Errorf("%s/%s: text %q", r.Memory.Namespace, r.Memory.ID, r.Memory.Text)
		}
		if !sameVec(r.Vector, vec(seed, 4)) {
			return fmt.Errorf("%s/%s: vector %v is not the one written with text %q", r.Memory.Namespace, r.Memory.ID, r.Vector, r.Memory.Text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := own*(perW+5-2) + shared*perW + sameIDs + fills; total != want {
		t.Fatalf("ForEach saw %d records, want %d", total, want)
	}
	if st, err := b.CheckProgress(nil, nil); err != nil || st.Problems != 0 || st.Memories != total || st.Vectors != total || st.Namespaces != own+1 {
		t.Fatalf("CheckProgress = %+v, %v", st, err)
	}
}

// testPersistence: everything survives closing and opening the same data
// again; the closed handle refuses use.
func testPersistence(t *testing.T, o Opener) {
	if o.Reopen == nil {
		t.Skip("storetest: the opener cannot reopen (Opener.Reopen is nil)")
	}
	b := open(t, o, 16)
	want := map[string][]float32{}
	for i := range 50 {
		id := fmt.Sprintf("m%03d", i)
		if i != 7 {
			want[id] = vec(i, 16)
		}
		put(t, b, mem("p", id), want[id])
	}
	put(t, b, mem("p", "gone"), vec(99, 16))
	put(t, b, mem("q", "gone"), vec(98, 16))
	for _, ns := range []string{"p", "q"} {
		if err := b.Delete(ns, "gone"); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, b)
	gp := gen(t, b, "p")

	b2 := o.Reopen(t, b)
	if b2 == nil {
		t.Fatal("storetest: Opener.Reopen returned nil")
	}
	if err := b.Put(mem("p", "late"), nil); !wantErr(t, "Put on the handle Reopen closed", err, store.ErrClosed) {
		return
	}
	unchanged(t, b2, before, "closing and reopening")
	n := 0
	var progress [][2]int
	err := b2.ForEach(func(r store.Record) error {
		n++
		equalMem(t, r.Memory, mem("p", r.Memory.ID))
		equalVec(t, r.Vector, want[r.Memory.ID])
		return nil
	}, store.WithProgress(20, func(done, total int) { progress = append(progress, [2]int{done, total}) }))
	if err != nil || n != 50 {
		t.Fatalf("ForEach n=%d err=%v", n, err)
	}
	if !slices.Equal(progress, [][2]int{{20, 50}, {40, 50}, {50, 50}}) {
		t.Fatalf("progress = %v", progress)
	}
	if nss := namespaces(t, b2); !slices.Equal(nss, []string{"p"}) {
		t.Fatalf("Namespaces after reopen = %v", nss)
	}
	// The reopened store goes on: the generation from where it was, the
	// dimension still enforced, and its writes survive the next reopen.
	put(t, b2, mem("p", "late"), vec(100, 16))
	if g := gen(t, b2, "p"); g.Seq != gp.Seq+1 || g == gp {
		t.Fatalf("first vector write after reopen: generation %v → %v", gp, g)
	}
	wantErr(t, "Put of the wrong dimension after reopen", b2.Put(mem("p", "bad"), vec(1, 4)), store.ErrInvalid)
	if err := b2.Delete("p", "m000"); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, b2)
	b3 := o.Reopen(t, b2)
	unchanged(t, b3, before, "a second reopen")
	if _, err := b3.Get("p", "m000"); !wantErr(t, "deleted before reopen: Get", err, store.ErrNotFound) {
		return
	}
	if v, err := b3.Vector("p", "late"); err != nil || !sameVec(v, vec(100, 16)) {
		t.Fatalf("written after the first reopen: %v, %v", v, err)
	}
}
