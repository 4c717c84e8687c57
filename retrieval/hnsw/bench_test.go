package hnsw

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Benchmarks of the approximate indexes against Flat (the exact scan,
// the brute-force baseline), measured in the same run:
//
//	BenchmarkHNSW_Search   recall@10 and latency per efSearch; "speedup"
//	                       is Flat's latency over the index's, timed
//	                       query by query in alternation so both see the
//	                       same machine load
//	BenchmarkHNSW_Build    build rate and heap bytes per 100k vectors
//	BenchmarkHNSW_Rebuild  rebuild from vectors vs Save + Load
//
// Knobs (environment): HNSW_BENCH_N vectors (default 10000; the scale
// rerankd targets for one namespace is 100000), HNSW_BENCH_DIM (1024),
// HNSW_BENCH_Q queries (200), HNSW_BENCH_EF efSearch values (default "50,100,200,400"),
// HNSW_BENCH_IMPLS ("native"), HNSW_BENCH_DATA
// ("uniform,clustered"), HNSW_BENCH_M and HNSW_BENCH_EFC (the defaults).
// Builds are cached across sub-benchmarks of one run. The full run:
//
//	HNSW_BENCH_N=100000 go test -run '^$' -bench HNSW_ -benchtime 200x -timeout 0 ./retrieval/hnsw
//
// "native" is the default configuration (exact-scan fallback on low
// contrast on); "native-graph" is the same graph with ScanContrast 0, i.e.
// what the graph search alone reaches.

func benchInt(b *testing.B, key string, def int) int {
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		b.Fatalf("%s=%q: want a positive integer", key, s)
	}
	return v
}

func benchList(key, def string) []string {
	s := os.Getenv(key)
	if s == "" {
		s = def
	}
	return strings.Split(s, ",")
}

type benchParams struct {
	n, dim, nq, m, efc int
}

func params(b *testing.B) benchParams {
	def := DefaultConfig(1)
	return benchParams{
		n:   benchInt(b, "HNSW_BENCH_N", 10000),
		dim: benchInt(b, "HNSW_BENCH_DIM", 1024),
		nq:  benchInt(b, "HNSW_BENCH_Q", 200),
		m:   benchInt(b, "HNSW_BENCH_M", def.M),
		efc: benchInt(b, "HNSW_BENCH_EFC", def.EfConstruction),
	}
}

var generators = map[string]func(*rand.Rand, int, int) [][]float32{
	"uniform": uniform, "clustered": clustered,
}

// dataset is one generated collection with its exact baseline.
type dataset struct {
	vecs, queries [][]float32
	flat          *Flat
	flatHeap      uint64
	truth         [][]Hit // Flat's top 10 per query
}

// built is one index over a dataset.
type built struct {
	x     Index
	build time.Duration
	heap  uint64
}

var (
	benchMu    sync.Mutex
	datasets   = map[string]*dataset{}
	builtCache = map[string]*built{}
)

// heapNow is the live heap after a full collection.
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func getDataset(b *testing.B, data string, n, dim, nq int) *dataset {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprintf("%s/%d/%d/%d", data, n, dim, nq)
	if d, ok := datasets[key]; ok {
		return d
	}
	gen, ok := generators[data]
	if !ok {
		b.Fatalf("HNSW_BENCH_DATA: unknown data set %q", data)
	}
	r := rand.New(rand.NewSource(5))
	d := &dataset{vecs: gen(r, n, dim), queries: gen(r, nq, dim)}
	before := heapNow()
	d.flat = mustFlat(b, dim)
	fill(b, d.vecs, d.flat)
	d.flatHeap = heapNow() - before
	for _, q := range d.queries {
		h, err := d.flat.Search(q, 10)
		if err != nil {
			b.Fatal(err)
		}
		d.truth = append(d.truth, h)
	}
	datasets[key] = d
	return d
}

func getBuilt(b *testing.B, data string, im string, p benchParams) (*dataset, *built) {
	b.Helper()
	d := getDataset(b, data, p.n, p.dim, p.nq)
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprintf("%s/%s/%+v", data, im, p)
	if x, ok := builtCache[key]; ok {
		return d, x
	}
	cfg := DefaultConfig(p.dim)
	cfg.M, cfg.EfConstruction = p.m, p.efc
	before := heapNow()
	start := time.Now()
	x := mustIndex(b, cfg)
	fill(b, d.vecs, x)
	bt := &built{x: x, build: time.Since(start)}
	bt.heap = heapNow() - before
	b.Logf("built %s %s n=%d dim=%d M=%d efC=%d in %v (%.0f inserts/s)",
		im, data, p.n, p.dim, p.m, p.efc, bt.build.Round(time.Millisecond), float64(p.n)/bt.build.Seconds())
	builtCache[key] = bt
	return d, bt
}

// searcher is what both approximate implementations offer for tuning.
type searcher interface {
	Index
	SetSearch(efSearch int, scanContrast float64) error
}

func BenchmarkHNSW_Search(b *testing.B) {
	p := params(b)
	var efs []int
	for _, s := range benchList("HNSW_BENCH_EF", "50,100,200,400") {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("HNSW_BENCH_EF: bad value %q", s)
		}
		efs = append(efs, v)
	}
	def := DefaultConfig(p.dim)
	if !slices.Contains(efs, def.EfSearch) {
		efs = append(efs, def.EfSearch)
		slices.Sort(efs)
	}
	for _, data := range benchList("HNSW_BENCH_DATA", "uniform,clustered") {
		for _, imName := range benchList("HNSW_BENCH_IMPLS", "native") {
			variants := []string{imName}
			if imName == "native" {
				variants = append(variants, "native-graph")
			}
			for _, variant := range variants {
				for _, ef := range efs {
					name := fmt.Sprintf("%s/N=%d/%s/ef=%d", data, p.n, variant, ef)
					b.Run(name, func(b *testing.B) {
						d, bt := getBuilt(b, data, imName, p)
						x := bt.x.(searcher)
						contrast := def.ScanContrast
						if variant == "native-graph" {
							contrast = 0
						}
						if err := x.SetSearch(ef, contrast); err != nil {
							b.Fatal(err)
						}
						benchSearch(b, d, x)
					})
				}
			}
		}
	}
}

// benchSearch reports recall@10 against Flat and the latency ratio, timed
// in alternation, then times the index alone for ns/op.
func benchSearch(b *testing.B, d *dataset, x searcher) {
	var scans0 int64
	h, native := x.(*HNSW)
	if native {
		scans0 = h.Scans()
	}
	var idxNs, flatNs time.Duration
	found, total := 0, 0
	for i, q := range d.queries {
		// Alternate which goes first, so neither profits more from the
		// other's warm caches.
		var got []Hit
		var err error
		for pass := range 2 {
			start := time.Now()
			if (i+pass)%2 == 0 {
				got, err = x.Search(q, 10)
				idxNs += time.Since(start)
			} else {
				_, err = d.flat.Search(q, 10)
				flatNs += time.Since(start)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, g := range got {
			for _, w := range d.truth[i] {
				if g.ID == w.ID {
					found++
				}
			}
		}
		total += len(d.truth[i])
	}
	nq := float64(len(d.queries))
	scans := float64(0)
	if native {
		scans = float64(h.Scans()-scans0) / nq
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := x.Search(d.queries[i%len(d.queries)], 10); err != nil {
			b.Fatal(err)
		}
		i++
	}
	// After the loop: b.Loop's first call resets reported metrics.
	if native {
		b.ReportMetric(scans, "scans/query")
	}
	b.ReportMetric(float64(found)/float64(total), "recall@10")
	b.ReportMetric(float64(flatNs.Nanoseconds())/nq, "flat-ns/query")
	b.ReportMetric(float64(flatNs)/float64(idxNs), "speedup")
}

func BenchmarkHNSW_Build(b *testing.B) {
	p := params(b)
	for _, data := range benchList("HNSW_BENCH_DATA", "uniform,clustered") {
		for _, imName := range benchList("HNSW_BENCH_IMPLS", "native") {
			b.Run(fmt.Sprintf("%s/N=%d/%s", data, p.n, imName), func(b *testing.B) {
				d, bt := getBuilt(b, data, imName, p)
				per100k := 1e5 / float64(p.n) / (1 << 20)
				for b.Loop() { // the build is cached: nothing to repeat
				}
				b.ReportMetric(float64(bt.build.Nanoseconds())/float64(p.n), "ns/op")
				b.ReportMetric(float64(p.n)/bt.build.Seconds(), "inserts/s")
				b.ReportMetric(float64(bt.heap)*per100k, "heap-MB/100k")
				b.ReportMetric(float64(d.flatHeap)*per100k, "flat-heap-MB/100k")
				b.ReportMetric(float64(bt.heap)/float64(d.flatHeap), "heap/flat")
			})
		}
	}
}

// BenchmarkHNSW_Rebuild compares the two ways to get an index back at
// start: rebuild it from the stored vectors (build) or Load a saved one.
// "rebuild/load" is how many times faster loading is. Sizes: 10k and
// HNSW_BENCH_N (clustered vectors).
func BenchmarkHNSW_Rebuild(b *testing.B) {
	p := params(b)
	sizes := []int{10000}
	if p.n != 10000 {
		sizes = append(sizes, p.n)
	}
	for _, n := range sizes {
		for _, imName := range benchList("HNSW_BENCH_IMPLS", "native") {
			b.Run(fmt.Sprintf("N=%d/%s", n, imName), func(b *testing.B) {
				pn := p
				pn.n = n
				_, bt := getBuilt(b, "clustered", imName, pn)
				var buf bytes.Buffer
				start := time.Now()
				if err := bt.x.(Saver).Save(&buf); err != nil {
					b.Fatal(err)
				}
				save := time.Since(start)
				// A fixed 3 loads, whatever b.N: one load of 100k×1024 is
				// ~1 s, and -benchtime 200x is meant for the searches.
				const loads = 3
				start = time.Now()
				for range loads {
					y, err := Load(bytes.NewReader(buf.Bytes()))
					if err != nil || y.Len() != n {
						b.Fatalf("Load: %v (Len %d)", err, y.Len())
					}
				}
				load := time.Since(start) / loads // mean, GC included
				b.ReportMetric(float64(load.Nanoseconds()), "ns/op")
				b.ReportMetric(bt.build.Seconds(), "rebuild-s")
				b.ReportMetric(save.Seconds(), "save-s")
				b.ReportMetric(load.Seconds(), "load-s")
				b.ReportMetric(float64(buf.Len())/(1<<20), "file-MB")
				b.ReportMetric(bt.build.Seconds()/load.Seconds(), "rebuild/load")
			})
		}
	}
}
