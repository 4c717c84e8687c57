package hnsw

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
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

// clustered draws n vectors around 100 random centres (noise 0.3 of the
// centre scale), like embeddings of memories about a hundred topics. The
// centres come from a fixed seed, so data and queries drawn by separate
// calls share them.
func clustered(r *rand.Rand, n, dim int) [][]float32 {
	centres := uniform(rand.New(rand.NewSource(int64(dim))), 100, dim)
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

// impl names an approximate implementation in test names.
type impl string

// implNative is HNSW, the one approximate implementation; the behaviour
// tests run over impls so that another can be compared by adding it.
const implNative impl = "native"

var impls = []impl{implNative}

func mustIndex(t testing.TB, cfg Config) Index {
	t.Helper()
	x, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func mustImpl(t testing.TB, _ impl, dim int) Index {
	t.Helper()
	return mustIndex(t, DefaultConfig(dim))
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

func fill1(t *testing.T, id string, v []float32, idx ...Index) {
	t.Helper()
	for _, x := range idx {
		if err := x.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
}

// sameHits fails unless got equals want exactly (ids, order, scores).
func sameHits(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
			t.Fatalf("%s: hit %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// TestFlatExact checks Flat's float32 prefilter against a plain float64
// scan, with near-ties (duplicated and slightly perturbed vectors) that a
// float32 ranking alone would misorder.
func TestFlatExact(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const dim = 64
	f := mustFlat(t, dim)
	vecs := uniform(r, 500, dim)
	for i := 0; i < 100; i++ { // near-duplicates of the first 50
		v := slices.Clone(vecs[i%50])
		v[r.Intn(dim)] += float32(r.NormFloat64()) * 1e-6
		vecs = append(vecs, v)
	}
	fill(t, vecs, f)
	for qi, q := range append(uniform(r, 30, dim), vecs[:20]...) {
		u, _ := normalize(q, dim)
		var want []Hit
		for i, id := range f.ids {
			want = append(want, Hit{ID: id, Score: dot(u, f.vecs[i*dim:(i+1)*dim])})
		}
		slices.SortFunc(want, hitCmp)
		for _, k := range []int{1, 10, 37, len(vecs), len(vecs) + 5} {
			got, err := f.Search(q, k)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("query %d k %d", qi, k), got, want[:min(k, len(want))])
		}
	}
}

func TestTinyEqualsFlat(t *testing.T) {
	for _, im := range impls {
		t.Run(string(im), func(t *testing.T) {
			r := rand.New(rand.NewSource(1))
			h, f := mustImpl(t, im, 8), mustFlat(t, 8)
			fill(t, uniform(r, 40, 8), h, f)
			for _, q := range uniform(r, 20, 8) {
				got, err := h.Search(q, 5)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := f.Search(q, 5)
				// Recall may be imperfect even here, so compare
				// what was found, exactly, and require most of it.
				found := 0
				for _, g := range got {
					for _, w := range want {
						if g.ID == w.ID {
							found++
							if g.Score != w.Score {
								t.Fatalf("score of %s: %v, flat %v", g.ID, g.Score, w.Score)
							}
						}
					}
				}
				if im == implNative && found != len(want) {
					sameHits(t, "native vs flat", got, want)
				}
				if found < 3 {
					t.Fatalf("found %d of %d: %+v vs %+v", found, len(want), got, want)
				}
			}
			if h.Len() != 40 || f.Len() != 40 || h.Dim() != 8 || f.Dim() != 8 {
				t.Fatalf("Len/Dim: %d %d %d %d", h.Len(), f.Len(), h.Dim(), f.Dim())
			}
			got, _ := h.Search([]float32{1, 0, 0, 0, 0, 0, 0, 0}, 100)
			if im == implNative && len(got) != 40 {
				t.Fatalf("k=100 on 40 vectors: %d hits", len(got))
			}
			for i := 1; i < len(got); i++ {
				if hitLess(got[i], got[i-1]) {
					t.Fatalf("hits not sorted at %d", i)
				}
			}
		})
	}
}

func allIndexes(t *testing.T, dim int) []Index {
	out := []Index{mustFlat(t, dim)}
	for _, im := range impls {
		out = append(out, mustImpl(t, im, dim))
	}
	return out
}

func TestCosineScore(t *testing.T) {
	for _, x := range allIndexes(t, 2) {
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

// TestInvalidVectors: zero vectors have no direction, so no cosine; every
// implementation refuses them (and NaN/Inf and wrong dimensions) with a
// typed error, as vector and as query, and stores nothing.
func TestInvalidVectors(t *testing.T) {
	for _, x := range allIndexes(t, 3) {
		err := x.Add("z", []float32{0, 0, 0})
		if !errors.Is(err, ErrZeroVector) || !strings.Contains(err.Error(), `"z"`) {
			t.Errorf("%T zero vector: %v", x, err)
		}
		if err := x.Add("tiny", []float32{1e-38, 0, 0}); !errors.Is(err, ErrZeroVector) {
			t.Errorf("%T denormal-norm vector: %v", x, err)
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
		err = x.Add("d", []float32{1, 2})
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
		// A refused replacement leaves the old vector in place.
		if err := x.Add("ok", []float32{1, 0, 0}); err != nil {
			t.Fatal(err)
		}
		if err := x.Add("ok", []float32{0, 0, 0}); !errors.Is(err, ErrZeroVector) {
			t.Errorf("%T zero replacement: %v", x, err)
		}
		if hits, _ := x.Search([]float32{1, 0, 0}, 1); len(hits) != 1 || hits[0].ID != "ok" || x.Len() != 1 {
			t.Errorf("%T after refused replacement: %+v, Len %d", x, hits, x.Len())
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
	if err := DefaultConfig(8).Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	if _, err := New(Config{Dim: 4}); err == nil {
		t.Error("New accepted zero M")
	}
	if _, err := NewFlat(0); err == nil {
		t.Error("NewFlat accepted dim 0")
	}
}

// TestDeleteAndReplace deletes and replaces at random (enough to trigger
// rebuilds) and checks that a search never returns a deleted id, returns
// replaced ids with their new vector's exact score, and that Len matches.
func TestDeleteAndReplace(t *testing.T) {
	for _, im := range impls {
		t.Run(string(im), func(t *testing.T) {
			r := rand.New(rand.NewSource(7))
			const dim = 16
			h, f := mustImpl(t, im, dim), mustFlat(t, dim)
			live := map[string]bool{}
			for step := range 3000 {
				id := fmt.Sprintf("m%d", r.Intn(300))
				if r.Intn(3) == 0 {
					if got, want := h.Delete(id), f.Delete(id); got != want || got != live[id] {
						t.Fatalf("step %d: Delete(%s) = %v, flat %v, live %v", step, id, got, want, live[id])
					}
					delete(live, id)
				} else {
					fill1(t, id, uniform(r, 1, dim)[0], h, f)
					live[id] = true
				}
				if step%100 != 0 {
					continue
				}
				if h.Len() != len(live) || f.Len() != len(live) {
					t.Fatalf("step %d: Len %d, flat %d, want %d", step, h.Len(), f.Len(), len(live))
				}
				q := uniform(r, 1, dim)[0]
				got, _ := h.Search(q, 10)
				want, _ := f.Search(q, len(live)+5)
				flatScore := map[string]float64{}
				for _, w := range want {
					flatScore[w.ID] = w.Score
				}
				if len(got) != min(10, len(live)) && im == implNative {
					t.Fatalf("step %d: %d hits, %d live", step, len(got), len(live))
				}
				for i := range got {
					if !live[got[i].ID] {
						t.Fatalf("step %d: deleted id %s returned", step, got[i].ID)
					}
					if got[i].Score != flatScore[got[i].ID] {
						t.Fatalf("step %d hit %d: %+v, flat score %v", step, i, got[i], flatScore[got[i].ID])
					}
				}
			}
			for id := range live {
				if !h.Delete(id) {
					t.Fatalf("Delete(%s) of a live id = false", id)
				}
			}
			if hits, _ := h.Search(uniform(r, 1, dim)[0], 10); len(hits) != 0 || h.Len() != 0 {
				t.Fatalf("after deleting all: %d hits, Len %d", len(hits), h.Len())
			}
			// Usable again after being emptied (coder/hnsw#10 panicked here
			// if the graph itself is emptied by Delete).
			fill1(t, "again", []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, h)
			if hits, _ := h.Search(uniform(r, 1, dim)[0], 10); len(hits) != 1 || hits[0].ID != "again" {
				t.Fatalf("after re-adding: %+v", hits)
			}
		})
	}
}

// TestRecall checks recall@10 against Flat at 2k×256 with the default
// parameters, for uniform (the hard case: no structure) and clustered
// vectors.
func TestRecall(t *testing.T) {
	const n, dim, nq = 2000, 256, 100
	minRecall := map[impl]map[string]float64{
		implNative: {"clustered": 0.95, "uniform": 0.95},
	}
	for _, im := range impls {
		for _, tc := range []struct {
			name string
			gen  func(*rand.Rand, int, int) [][]float32
		}{{"clustered", clustered}, {"uniform", uniform}} {
			t.Run(string(im)+"/"+tc.name, func(t *testing.T) {
				r := rand.New(rand.NewSource(3))
				cfg := DefaultConfig(dim)
				// Measure the graph, not the exact-scan fallback.
				cfg.ScanContrast = 0
				h, f := mustIndex(t, cfg), mustFlat(t, dim)
				fill(t, tc.gen(r, n, dim), h, f)
				rec := recallAt(t, h, f, tc.gen(r, nq, dim), 10)
				t.Logf("recall@10 = %.4f", rec)
				if want := minRecall[im][tc.name]; rec < want {
					t.Errorf("recall@10 = %.4f, want >= %.2f", rec, want)
				}
			})
		}
	}
}

// TestScanContrast checks the exact-scan fallback: uniform 1024-d vectors
// (no structure, contrast ~0.9) are answered by a scan, exactly; clustered
// ones (contrast ~0.1) by the graph.
func TestScanContrast(t *testing.T) {
	const n, dim, nq = 500, 1024, 20
	for _, tc := range []struct {
		name      string
		gen       func(*rand.Rand, int, int) [][]float32
		wantScans bool
	}{{"uniform", uniform, true}, {"clustered", clustered, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(17))
			cfg := DefaultConfig(dim)
			cfg.EfSearch = 10 // a beam too narrow to be exact by itself
			h, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			f := mustFlat(t, dim)
			fill(t, tc.gen(r, n, dim), h, f)
			qs := tc.gen(r, nq, dim)
			rec := recallAt(t, h, f, qs, 10)
			scans := h.Scans()
			t.Logf("recall@10 %.3f, %d of %d searches scanned", rec, scans, nq)
			if tc.wantScans {
				if scans != nq || rec != 1 {
					t.Errorf("scans %d (want %d), recall %.3f (want 1)", scans, nq, rec)
				}
			} else if scans != 0 {
				t.Errorf("clustered: %d searches fell back to a scan", scans)
			}
			if err := h.SetSearch(10, 0); err != nil {
				t.Fatal(err)
			}
			if err := h.SetSearch(0, 2); err == nil {
				t.Error("SetSearch accepted EfSearch 0 and ScanContrast 2")
			}
		})
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

// TestSaveLoad round-trips both implementations, with tombstones, and
// checks the loaded index answers exactly as the saved one and keeps
// working (adds, deletes).
func TestSaveLoad(t *testing.T) {
	for _, im := range impls {
		t.Run(string(im), func(t *testing.T) {
			r := rand.New(rand.NewSource(13))
			const dim = 32
			cfg := DefaultConfig(dim)
			cfg.EfSearch, cfg.Seed = 77, 5
			x := mustIndex(t, cfg)
			fill(t, clustered(r, 600, dim), x)
			for i := range 50 {
				x.Delete(fmt.Sprintf("v%d", i*3))
			}
			var buf bytes.Buffer
			if err := x.(Saver).Save(&buf); err != nil {
				t.Fatal(err)
			}
			y, err := Load(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if y.Len() != x.Len() || y.Dim() != dim {
				t.Fatalf("loaded Len %d Dim %d, want %d %d", y.Len(), y.Dim(), x.Len(), dim)
			}
			if got := y.(interface{ Config() Config }).Config(); got != cfg {
				t.Fatalf("loaded config %+v, want %+v", got, cfg)
			}
			for _, q := range clustered(r, 20, dim) {
				a, _ := x.Search(q, 10)
				b, _ := y.Search(q, 10)
				sameHits(t, "loaded vs saved", b, a)
			}
			if y.Delete("v0") || !y.Delete("v1") {
				t.Fatal("loaded index lost its tombstones")
			}
			fill1(t, "new", uniform(r, 1, dim)[0], y)
			if y.Len() != x.Len() {
				t.Fatalf("Len after delete+add %d, want %d", y.Len(), x.Len())
			}

			// Damage anywhere is reported as ErrCorrupt, never a panic.
			raw := buf.Bytes()
			for _, cut := range []int{0, 5, 8, 20, len(raw) / 2, len(raw) - 1} {
				if _, err := Load(bytes.NewReader(raw[:cut])); !errors.Is(err, ErrCorrupt) {
					t.Errorf("truncated at %d: %v", cut, err)
				}
			}
			for _, at := range []int{30, len(raw) / 3, len(raw) - 10} {
				bad := slices.Clone(raw)
				bad[at] ^= 0x40
				if _, err := Load(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
					t.Errorf("flipped byte %d: %v", at, err)
				}
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	for _, im := range impls {
		t.Run(string(im), func(t *testing.T) {
			r := rand.New(rand.NewSource(9))
			const dim = 8
			h := mustImpl(t, im, dim)
			fill(t, uniform(r, 200, dim), h)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					r := rand.New(rand.NewSource(int64(g)))
					for i := range 200 {
						id := fmt.Sprintf("v%d", r.Intn(300))
						switch i % 4 {
						case 0:
							_ = h.Add(id, uniform(r, 1, dim)[0])
						case 1:
							h.Delete(id)
						case 2:
							var buf bytes.Buffer
							if err := h.(Saver).Save(&buf); err != nil {
								t.Error(err)
							}
						default:
							if _, err := h.Search(uniform(r, 1, dim)[0], 5); err != nil {
								t.Error(err)
							}
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestHas(t *testing.T) {
	type haser interface {
		Index
		Has(id string) bool
	}
	for _, x := range allIndexes(t, 2) {
		h := x.(haser)
		fill1(t, "a", []float32{1, 0}, h)
		fill1(t, "b", []float32{0, 1}, h)
		h.Delete("a")
		if h.Has("a") || !h.Has("b") || h.Has("c") {
			t.Fatalf("%T: Has a=%v b=%v c=%v, want false true false", x, h.Has("a"), h.Has("b"), h.Has("c"))
		}
	}
}
