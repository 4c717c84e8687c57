package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func uniform(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// clustered draws n vectors around 50 random centres (noise 0.3 of the
// centre scale), like embeddings of memories about a few topics.
func clustered(r *rand.Rand, n, dim int) [][]float32 {
	centres := uniform(r, 50, dim)
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.Intn(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.3*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func mustHNSW(t testing.TB, dim int) *HNSW {
	t.Helper()
	h, err := New(DefaultConfig(dim))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustFlat(t testing.TB, dim int) *Flat {
	t.Helper()
	f, err := NewFlat(dim)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func fill(t testing.TB, vecs [][]float32, idx ...Index) {
	t.Helper()
	for i, v := range vecs {
		for _, x := range idx {
			if err := x.Add(fmt.Sprintf("v%d", i), v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestTinyEqualsFlat(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	h, f := mustHNSW(t, 8), mustFlat(t, 8)
	fill(t, uniform(r, 40, 8), h, f)
	for _, q := range uniform(r, 20, 8) {
		got, err := h.Search(q, 5)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.Search(q, 5)
		if len(got) != len(want) {
			t.Fatalf("got %d hits, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("hit %d: %+v, flat %+v", i, got[i], want[i])
			}
		}
	}
	if h.Len() != 40 || f.Len() != 40 || h.Dim() != 8 || f.Dim() != 8 {
		t.Fatalf("Len/Dim: %d %d %d %d", h.Len(), f.Len(), h.Dim(), f.Dim())
	}
	// k larger than the index returns everything, sorted.
	got, _ := h.Search([]float32{1, 0, 0, 0, 0, 0, 0, 0}, 100)
	if len(got) != 40 {
		t.Fatalf("k=100 on 40 vectors: %d hits", len(got))
	}
	for i := 1; i < len(got); i++ {
		if hitLess(got[i], got[i-1]) {
			t.Fatalf("hits not sorted at %d", i)
		}
	}
}

func TestCosineScore(t *testing.T) {
	for _, x := range []Index{mustHNSW(t, 2), mustFlat(t, 2)} {
		_ = x.Add("east", []float32{10, 0})
		_ = x.Add("north", []float32{0, 0.1})
		_ = x.Add("west", []float32{-3, 0})
		got, err := x.Search([]float32{1, 1}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID != "east" || got[1].ID != "north" || got[2].ID != "west" ||
			math.Abs(got[0].Score-math.Sqrt2/2) > 1e-6 || math.Abs(got[2].Score+math.Sqrt2/2) > 1e-6 {
			t.Fatalf("%T: %+v", x, got)
		}
	}
}

func TestInvalidVectors(t *testing.T) {
	for _, x := range []Index{mustHNSW(t, 3), mustFlat(t, 3)} {
		if err := x.Add("z", []float32{0, 0, 0}); !errors.Is(err, ErrZeroVector) {
			t.Errorf("%T zero vector: %v", x, err)
		}
		if _, err := x.Search([]float32{0, 0, 0}, 1); !errors.Is(err, ErrZeroVector) {
			t.Errorf("%T zero query: %v", x, err)
		}
		if err := x.Add("n", []float32{1, float32(math.NaN()), 0}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("%T NaN: %v", x, err)
		}
		if err := x.Add("i", []float32{float32(math.Inf(1)), 0, 0}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("%T Inf: %v", x, err)
		}
		err := x.Add("d", []float32{1, 2})
		if !errors.Is(err, ErrDimMismatch) || !strings.Contains(err.Error(), "2") || !strings.Contains(err.Error(), "3") {
			t.Errorf("%T dim mismatch: %v", x, err)
		}
		if _, err := x.Search([]float32{1, 2, 3, 4}, 1); !errors.Is(err, ErrDimMismatch) {
			t.Errorf("%T search dim mismatch: %v", x, err)
		}
		if x.Len() != 0 {
			t.Errorf("%T: refused vectors were stored", x)
		}
		if hits, err := x.Search([]float32{1, 0, 0}, 5); err != nil || hits != nil {
			t.Errorf("%T empty search: %v %v", x, hits, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{}.Validate()
	for _, want := range []string{"Dim", "M must", "EfSearch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(zero) = %v, want %q reported", err, want)
		}
	}
	if _, err := New(Config{Dim: 4}); err == nil {
		t.Error("New accepted zero M")
	}
	if _, err := NewFlat(0); err == nil {
		t.Error("NewFlat accepted dim 0")
	}
}

// TestDeleteAndReplace deletes and replaces at random and checks that a
// search never returns a deleted id, returns replaced ids with their new
// vector, and matches Flat on a small set.
func TestDeleteAndReplace(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const dim = 16
	h, f := mustHNSW(t, dim), mustFlat(t, dim)
	live := map[string]bool{}
	for step := range 3000 {
		id := fmt.Sprintf("m%d", r.Intn(300))
		if r.Intn(3) == 0 {
			if got, want := h.Delete(id), f.Delete(id); got != want || got != live[id] {
				t.Fatalf("step %d: Delete(%s) = %v, flat %v, live %v", step, id, got, want, live[id])
			}
			delete(live, id)
		} else {
			v := uniform(r, 1, dim)[0]
			fill1(t, id, v, h, f)
			live[id] = true
		}
		if step%100 != 0 {
			continue
		}
		if h.Len() != len(live) || f.Len() != len(live) {
			t.Fatalf("step %d: Len %d, flat %d, want %d", step, h.Len(), f.Len(), len(live))
		}
		q := uniform(r, 1, dim)[0]
		got, _ := h.Search(q, len(live)+5)
		want, _ := f.Search(q, len(live)+5)
		flatScore := map[string]float64{}
		for _, w := range want {
			flatScore[w.ID] = w.Score
		}
		for i := range got {
			if !live[got[i].ID] {
				t.Fatalf("step %d: deleted id %s returned", step, got[i].ID)
			}
			// Approximate search may miss ids, but what it returns must
			// carry the current (replaced) vector's exact score.
			if math.Abs(got[i].Score-flatScore[got[i].ID]) > 1e-9 {
				t.Fatalf("step %d hit %d: %+v, flat score %v", step, i, got[i], flatScore[got[i].ID])
			}
		}
	}
	for id := range live {
		h.Delete(id)
	}
	if hits, _ := h.Search(uniform(r, 1, dim)[0], 10); len(hits) != 0 || h.Len() != 0 {
		t.Fatalf("after deleting all: %d hits, Len %d", len(hits), h.Len())
	}
}

func fill1(t *testing.T, id string, v []float32, idx ...Index) {
	t.Helper()
	for _, x := range idx {
		if err := x.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
}

func recallAt(t testing.TB, h, f Index, queries [][]float32, k int) float64 {
	t.Helper()
	found, total := 0, 0
	for _, q := range queries {
		got, err := h.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.Search(q, k)
		set := map[string]bool{}
		for _, w := range want {
			set[w.ID] = true
		}
		for _, g := range got {
			if set[g.ID] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

func TestRecall(t *testing.T) {
	const n, dim = 5000, 128
	for _, tc := range []struct {
		name string
		gen  func(*rand.Rand, int, int) [][]float32
	}{{"clustered", clustered}, {"uniform", uniform}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(3))
			h, f := mustHNSW(t, dim), mustFlat(t, dim)
			fill(t, tc.gen(r, n, dim), h, f)
			rec := recallAt(t, h, f, tc.gen(r, 200, dim), 10)
			t.Logf("recall@10 = %.4f", rec)
			if rec < 0.95 {
				t.Errorf("recall@10 = %.4f, want >= 0.95", rec)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	const dim = 8
	h := mustHNSW(t, dim)
	fill(t, uniform(r, 200, dim), h)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			for i := range 200 {
				id := fmt.Sprintf("v%d", r.Intn(300))
				switch i % 3 {
				case 0:
					_ = h.Add(id, uniform(r, 1, dim)[0])
				case 1:
					h.Delete(id)
				default:
					if _, err := h.Search(uniform(r, 1, dim)[0], 5); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkHNSW_Recall builds HNSW and Flat over N random 1024-dimensional
// vectors (clustered and uniform), then times HNSW queries (ns/op) and
// reports recall@10 against Flat and Flat's ns/query. N defaults to 20000;
// the target size is 100k, which takes minutes to build:
//
//	HNSW_BENCH_N=100000 go test -run '^$' -bench HNSW_Recall -benchtime 200x -timeout 60m ./retrieval/hnsw
func BenchmarkHNSW_Recall(b *testing.B) {
	n := 20000
	if s := os.Getenv("HNSW_BENCH_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("HNSW_BENCH_N=%q: want a positive integer", s)
		}
		n = v
	}
	const dim, k, nq = 1024, 10, 200
	for _, tc := range []struct {
		name string
		gen  func(*rand.Rand, int, int) [][]float32
	}{{"clustered", clustered}, {"uniform", uniform}} {
		b.Run(fmt.Sprintf("%s/N=%d", tc.name, n), func(b *testing.B) {
			r := rand.New(rand.NewSource(5))
			h, f := mustHNSW(b, dim), mustFlat(b, dim)
			start := time.Now()
			fill(b, tc.gen(r, n, dim), h, f)
			b.Logf("built %d vectors (HNSW + Flat) in %v", n, time.Since(start))
			queries := tc.gen(r, nq, dim)
			rec := recallAt(b, h, f, queries, k)
			start = time.Now()
			for _, q := range queries {
				if _, err := f.Search(q, k); err != nil {
					b.Fatal(err)
				}
			}
			flatNs := float64(time.Since(start).Nanoseconds()) / nq
			i := 0
			for b.Loop() {
				if _, err := h.Search(queries[i%nq], k); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(rec, "recall@10")
			b.ReportMetric(flatNs, "flat-ns/query")
		})
	}
}
