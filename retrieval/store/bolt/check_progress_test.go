package bolt

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// TestCheckProgress: bbolt's progress total counts every memory and vector
// record (from the buckets' statistics), it is reported every
// progressEvery records, and Check's statistics are CheckProgress's.
// (That progress on a healthy store is monotonic and ends at done == total
// is storetest's CheckProgress, for every backend.)
func TestCheckProgress(t *testing.T) {
	cases := []struct {
		name            string
		spaces, perNS   int
		withVectorEvery int // every k-th memory has a vector (0: none)
	}{
		{"empty", 0, 0, 0},
		{"one namespace, no vectors", 1, 10, 0},
		{"several, past one progress step", 3, 900, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t, Options{NoSync: true})
			want := int64(0)
			for n := range tc.spaces {
				var batch []store.Item
				for i := range tc.perNS {
					it := store.Item{Memory: mem(fmt.Sprintf("ns%d", n), fmt.Sprintf("m%04d", i))}
					want++
					if tc.withVectorEvery > 0 && i%tc.withVectorEvery == 0 {
						it.Vector = vec(i, 4)
						want++
					}
					batch = append(batch, it)
				}
				if err := s.PutBatch(batch); err != nil {
					t.Fatal(err)
				}
			}
			var calls [][2]int64
			st, err := s.CheckProgress(nil, func(done, total int64) { calls = append(calls, [2]int64{done, total}) })
			if err != nil {
				t.Fatal(err)
			}
			plain, err := s.Check(nil)
			if err != nil || st != plain {
				t.Fatalf("stats %+v, Check's %+v (%v)", st, plain, err)
			}
			if len(calls) == 0 || calls[len(calls)-1] != [2]int64{want, want} {
				t.Fatalf("calls %v, want the last to be (%d, %d)", calls, want, want)
			}
			if len(calls) != int(want/progressEvery)+1 {
				t.Errorf("%d records but %d progress calls, want one every %d and one at the end", want, len(calls), progressEvery)
			}
			for i, c := range calls {
				if c[1] != want {
					t.Errorf("call %d: %v, want total %d", i, c, want)
				}
			}
		})
	}
}

// TestSalvageProgress: salvage reports every memory record once, with the
// total from the start, never going back, ending at done == total; its
// statistics are those of Salvage.
func TestSalvageProgress(t *testing.T) {
	for _, n := range []int{0, 5, 3*progressEvery + 7} {
		t.Run(fmt.Sprint(n, " memories"), func(t *testing.T) {
			s, src := openTemp(t, Options{NoSync: true})
			var batch []store.Item
			for i := range n {
				batch = append(batch, store.Item{Memory: mem(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("m%05d", i)), Vector: vec(i, 4)})
			}
			if n > 0 {
				if err := s.PutBatch(batch); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var calls [][2]int64
			st, err := SalvageProgress(src, filepath.Join(dir, "a.db"), nil, func(done, total int64) { calls = append(calls, [2]int64{done, total}) })
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Salvage(src, filepath.Join(dir, "b.db"), nil)
			if err != nil || st != plain || st.Copied != n {
				t.Fatalf("stats %+v, Salvage's %+v (%v), want %d copied", st, plain, err, n)
			}
			want := int64(n)
			if len(calls) == 0 || calls[len(calls)-1] != [2]int64{want, want} {
				t.Fatalf("calls %v, want the last to be (%d, %d)", calls, want, want)
			}
			if n > progressEvery && len(calls) < 3 {
				t.Errorf("%d records but %d progress calls", n, len(calls))
			}
			for i, c := range calls {
				if c[1] != want || (i > 0 && c[0] < calls[i-1][0]) {
					t.Errorf("call %d: %v (want total %d, done not going back)", i, c, want)
				}
			}
		})
	}
}
