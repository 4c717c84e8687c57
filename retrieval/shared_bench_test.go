package retrieval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rerankd/rerankd/internal/pgtest"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/retrieval/store/pgstore"
)

// Benchmarks of the service over a shared store (PostgreSQL, pgstore) with
// the service over the bbolt store as the baseline, measured in the same
// run and interleaved (alternately one first, then the other), so that
// the ratio each reports is not skewed by what else the machine does
// meanwhile. Each starts its own PostgreSQL server with pgtest.Start:
// fsync on (the default), as the bbolt store fsyncs every commit too.
// Results and commands: docs/perf/shared-store.md.
//
// Setup (loading up to 100k memories) is done once per benchmark, in the
// parent of the sub-benchmarks that measure; the measured loops use
// b.Loop, so -benchtime Nx gives N samples. A loaded PostgreSQL database
// is analyzed before measuring, as autovacuum would have done by then in
// production (sbAnalyze; BenchmarkShared_Ingest/fresh shows why).
//
//	go test ./retrieval -run '^$' -bench 'Shared_Ingest' -benchtime 200x
//	go test ./retrieval -run '^$' -bench 'Shared_WarmSearch' -benchtime 2000x
//	go test ./retrieval -run '^$' -bench 'Shared_ColdSearch' -benchtime 5x -timeout 30m
//	go test ./retrieval -run '^$' -bench 'Shared_Visibility' -benchtime 200x

// sbSkipShort skips the shared-store benchmarks under -short: they start
// PostgreSQL and load up to 100k memories.
func sbSkipShort(b *testing.B) {
	b.Helper()
	if testing.Short() {
		b.Skip("shared-store benchmarks start PostgreSQL and load up to 100k memories; skipped under -short")
	}
}

// sbGen makes the benchmarks' memories, as BenchmarkSearchRanking does:
// 12 Zipf-distributed words (s=1.1) of a 20k-word vocabulary, sessions of
// 20 turns as sources, one second apart. Two generators made alike make
// the same memories.
type sbGen struct {
	ns   string
	zipf *rand.Zipf
	k    int
}

func newSBGen(ns string) *sbGen {
	return &sbGen{ns: ns, zipf: rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, 20_000)}
}

// item makes the next memory; extra words, if any, are appended to its
// text.
func (g *sbGen) item(extra ...string) store.Item {
	words := make([]string, 12, 12+len(extra))
	for w := range words {
		words[w] = fmt.Sprintf("w%d", g.zipf.Uint64())
	}
	words = append(words, extra...)
	k := g.k
	g.k++
	return store.Item{Memory: memory.Memory{Namespace: g.ns, ID: fmt.Sprintf("m%07d", k),
		Text: strings.Join(words, " "), Source: fmt.Sprintf("s%d", k/20), Time: day0.Add(time.Duration(k) * time.Second)}}
}

func (g *sbGen) items(n int) []store.Item {
	out := make([]store.Item, n)
	for i := range out {
		out[i] = g.item()
	}
	return out
}

// sbQueries are BenchmarkSearchRanking's queries: four words, two of the
// 2000 most frequent, one Zipf-drawn, one from the whole vocabulary.
func sbQueries() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(5, 6)), 1.1, 1, 20_000)
	qs := make([]string, 256)
	for i := range qs {
		qs[i] = fmt.Sprintf("w%d w%d w%d w%d", rng.IntN(2000), rng.IntN(2000), zipf.Uint64(), rng.IntN(20000))
	}
	return qs
}

// sbConfig is the default configuration with a CatchUp long enough for a
// first build of 100k memories.
func sbConfig() Config {
	cfg := DefaultConfig()
	cfg.Follow.CatchUp = 2 * time.Minute
	return cfg
}

// sbPG opens a PostgreSQL store on url with the default options, closed
// at the end of b (after the services over it, registered later).
func sbPG(b *testing.B, url string) *pgstore.Store {
	b.Helper()
	st, err := pgstore.Open(url, pgstore.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// sbBolt opens a bbolt store with the default options: every commit
// fsyncs.
func sbBolt(b *testing.B) *bolt.Store {
	b.Helper()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "m.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// sbService starts a service over st, closed at the end of b; over the
// bbolt store it waits for the start-up build (a shared store has none:
// namespaces are built on first use).
func sbService(b *testing.B, st Store, cfg Config) *Service {
	b.Helper()
	e, err := New(st, nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	e.Start()
	b.Cleanup(func() { _ = e.Close() })
	if err := e.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	return e
}

// sbLoad writes the same n memories of namespace ns into every store of
// sts, with PutBatch of 1000, and returns them.
func sbLoad(b *testing.B, ns string, n int, sts ...store.Backend) []store.Item {
	b.Helper()
	items := newSBGen(ns).items(n)
	for start := 0; start < n; start += 1000 {
		batch := items[start:min(start+1000, n)]
		for _, st := range sts {
			if err := st.PutBatch(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	return items
}

// sbAnalyze runs ANALYZE on the database at url, as autovacuum does within
// a minute of a table's growth (autovacuum_naptime): until then the
// statements pgstore's connections prepared while the table was small
// keep the plan cached then (see BenchmarkShared_Ingest's "fresh").
func sbAnalyze(b *testing.B, url string) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// sbLat is a list of latencies.
type sbLat []time.Duration

// q returns the p-quantile (nearest rank).
func (l sbLat) q(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func durUS(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sbReport reports p50 and p99 of both, in unit ("µs" or "ms"), and the
// ratio of the p50s.
func sbReport(b *testing.B, pg, bolt sbLat, unit string) {
	conv := durUS
	if unit == "ms" {
		conv = durMS
	}
	b.ReportMetric(conv(pg.q(0.5)), "pg-p50-"+unit)
	b.ReportMetric(conv(pg.q(0.99)), "pg-p99-"+unit)
	b.ReportMetric(conv(bolt.q(0.5)), "bbolt-p50-"+unit)
	b.ReportMetric(conv(bolt.q(0.99)), "bbolt-p99-"+unit)
	b.ReportMetric(float64(pg.q(0.5))/float64(bolt.q(0.5)), "pg/bbolt-p50")
}

// interleave runs f(0) and f(1) in the order given by i's parity.
func interleave(i int, f func(which int)) {
	f(i % 2)
	f(1 - i%2)
}

// BenchmarkShared_Ingest: Service.Add into PostgreSQL against bbolt, both
// durable (PostgreSQL with fsync on, bbolt's default fsync), one memory
// per call (Single) and 100 (Batch100). Reports the memories/s of each
// and their ratio (pg/bbolt-rate > 1: PostgreSQL ingests faster). ns/op
// is one Add to each store.
//
// fresh: both stores start empty, and autovacuum has not analyzed the
// PostgreSQL table during the run (its first look is up to a minute
// away). analyzed: both start with 10k memories of the namespace, and
// the database was analyzed after loading them, as autovacuum does in a
// database that has been written for a while. The difference used to be
// PutBatch's read of the batch's existing rows: the generic plan
// PostgreSQL caches for it on a never-analyzed table scans the whole
// namespace, so a write cost time in proportion to the namespace's size
// until an ANALYZE replaced the plan. pgstore now analyzes the table
// itself as writes grow it (pgstore/analyze.go); fresh measures that.
func BenchmarkShared_Ingest(b *testing.B) {
	sbSkipShort(b)
	srv := pgtest.Start(b) // fsync on
	for _, start := range []struct {
		name    string
		preload int
	}{{"fresh", 0}, {"analyzed", 10_000}} {
		b.Run(start.name, func(b *testing.B) {
			for _, size := range []int{1, 100} {
				sbIngest(b, srv, start.preload, size)
			}
		})
	}
}

// sbIngest runs one BenchmarkShared_Ingest case, on a database of its own:
// preload memories loaded and analyzed first, size memories per Add.
func sbIngest(b *testing.B, srv *pgtest.Server, preload, size int) {
	name := "Single"
	if size > 1 {
		name = fmt.Sprintf("Batch%d", size)
	}
	b.Run(name, func(b *testing.B) {
		url := srv.NewDB(b)
		pgSt, boltSt := sbPG(b, url), sbBolt(b)
		gens := [2]*sbGen{newSBGen("u"), newSBGen("u")}
		if preload > 0 {
			sbLoad(b, "u", preload, pgSt, boltSt)
			sbAnalyze(b, url)
			gens[0].k, gens[1].k = preload, preload // new IDs
		}
		services := [2]*Service{sbService(b, pgSt, sbConfig()), sbService(b, boltSt, sbConfig())}
		var took [2]time.Duration
		ctx := context.Background()
		n, i := 0, 0
		b.ReportAllocs()
		for b.Loop() {
			interleave(i, func(w int) {
				items := gens[w].items(size)
				t0 := time.Now()
				if _, err := services[w].Add(ctx, items); err != nil {
					b.Fatal(err)
				}
				took[w] += time.Since(t0)
			})
			n += size
			i++
		}
		b.ReportMetric(float64(n)/took[0].Seconds(), "pg-memories/s")
		b.ReportMetric(float64(n)/took[1].Seconds(), "bbolt-memories/s")
		b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "pg/bbolt-rate")
	})
}

// BenchmarkShared_WarmSearch: Service.Retrieve on a warm replica (its
// namespace built and caught up) against the bbolt service, 10k and 100k
// memories in one namespace, no vectors (BM25 level), with plain BM25
// and with the default ranking; the same queries, interleaved. Reports p50
// and p99 of each and the ratio of the p50s. Each PostgreSQL search
// first reads the namespace's committed sequence (one round trip), and
// fills the candidates from the store as bbolt's does (GetMany).
func BenchmarkShared_WarmSearch(b *testing.B) {
	sbSkipShort(b)
	srv := pgtest.Start(b)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			url := srv.NewDB(b)
			pgSt, boltSt := sbPG(b, url), sbBolt(b)
			sbLoad(b, "u", n, pgSt, boltSt)
			sbAnalyze(b, url)
			services := [2]*Service{sbService(b, pgSt, sbConfig()), sbService(b, boltSt, sbConfig())}
			ctx := context.Background()
			queries := sbQueries()
			// Warm up: the first PostgreSQL search builds the namespace;
			// both answer every query once, and must agree.
			differ := 0
			for _, q := range queries {
				var got [2][]string
				for w, e := range services {
					r, err := e.Retrieve(ctx, Query{Namespace: "u", Text: q})
					if err != nil {
						b.Fatal(err)
					}
					got[w] = candIDs(r.Candidates)
				}
				if !slices.Equal(got[0], got[1]) {
					differ++
				}
			}
			if differ > 0 {
				b.Logf("%d of %d queries answered differently by the two services", differ, len(queries))
			}
			plain, def := lexrank.PlainBM25(), lexrank.DefaultRanking()
			for _, rk := range []struct {
				name string
				r    *lexrank.Ranking
			}{{"bm25", &plain}, {"default", &def}} {
				b.Run(rk.name, func(b *testing.B) {
					var lat [2]sbLat
					i := 0
					b.ReportAllocs()
					for b.Loop() {
						q := Query{Namespace: "u", Text: queries[i%len(queries)], Ranking: rk.r}
						interleave(i, func(w int) {
							t0 := time.Now()
							r, err := services[w].Retrieve(ctx, q)
							if err != nil {
								b.Fatal(err)
							}
							lat[w] = append(lat[w], time.Since(t0))
							if r.Level != LevelBM25 {
								b.Fatalf("level %s (%s)", r.Level, r.Why)
							}
						})
						i++
					}
					sbReport(b, lat[0], lat[1], "µs")
				})
			}
		})
	}
}

// BenchmarkShared_ColdSearch: the first search of a namespace whose
// indexes a PostgreSQL replica dropped (IndexMemory of 1 byte: searching
// another, tiny, namespace evicts it), from the Retrieve call to its
// answer, which waits for the build from the database; against the
// bbolt service's start-up build of the same memories (New, Start, Wait).
// 10k and 100k memories; reports p50 and p99 of each, in ms, and the
// ratio of the p50s. Use -benchtime Nx: one sample takes seconds.
func BenchmarkShared_ColdSearch(b *testing.B) {
	sbSkipShort(b)
	srv := pgtest.Start(b)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			url := srv.NewDB(b)
			pgSt, boltSt := sbPG(b, url), sbBolt(b)
			sbLoad(b, "u", n, pgSt, boltSt)
			sbLoad(b, "v", 10, pgSt) // the namespace whose use evicts u
			sbAnalyze(b, url)
			cfg := sbConfig()
			cfg.Follow.IndexMemory = 1
			pg := sbService(b, pgSt, cfg)
			ctx := context.Background()
			q := Query{Namespace: "u", Text: sbQueries()[0]}
			var lat [2]sbLat
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if sp, _ := pg.space("u", false); sp != nil {
					if _, err := pg.Retrieve(ctx, Query{Namespace: "v", Text: "w1"}); err != nil {
						b.Fatal(err)
					}
					// v's build evicts u after v's first search may have
					// returned: wait for it.
					for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
						if sp, _ := pg.space("u", false); sp == nil {
							break
						}
						if time.Now().After(deadline) {
							b.Fatal("namespace u not evicted")
						}
					}
				}
				interleave(i, func(w int) {
					t0 := time.Now()
					if w == 0 {
						builds := pg.Follow().Builds
						r, err := pg.Retrieve(ctx, q)
						if err != nil {
							b.Fatal(err)
						}
						lat[0] = append(lat[0], time.Since(t0))
						if len(r.Candidates) == 0 || r.Level != LevelBM25 {
							b.Fatalf("cold search: %d candidates at level %s (%s)", len(r.Candidates), r.Level, r.Why)
						}
						// The build is counted just after it lets the
						// search through.
						for deadline := time.Now().Add(10 * time.Second); pg.Follow().Builds == builds; time.Sleep(time.Millisecond) {
							if time.Now().After(deadline) {
								b.Fatal("the search did not build the namespace")
							}
						}
						return
					}
					e, err := New(boltSt, nil, sbConfig())
					if err != nil {
						b.Fatal(err)
					}
					e.Start()
					if err := e.Wait(ctx); err != nil {
						b.Fatal(err)
					}
					lat[1] = append(lat[1], time.Since(t0))
					if got := e.Stats("u").Indexed; got != n {
						b.Fatalf("bbolt build indexed %d of %d", got, n)
					}
					_ = e.Close()
				})
				i++
			}
			sbReport(b, lat[0], lat[1], "ms")
			b.Logf("pg service: %+v", pg.Follow())
		})
	}
}

// BenchmarkShared_Visibility: two PostgreSQL replicas (services over two
// pgstore.Stores on one database) over a namespace of 10k memories; A
// adds a memory with a word of its own.
//
// ReadYourWrites: the first Retrieve on B after A's Add returned, for that
// word (it must find it: a search catches up to the committed sequence
// first); against the bbolt service's Retrieve right after its own Add
// (which indexes before it returns). p50 and p99 in µs, ratio of p50s.
//
// Follow: with no search on B, the time from A's Add returning until B's
// index holds the memory (Stats(ns).Indexed grows), which only the
// background follower (notifications, else the Config.Follow.Poll poll) brings
// about. p50, p99 and max in ms, and p50/poll, the ratio of the p50 to
// Config.Follow.Poll: near 0 when notifications work, about 0.5 when only the
// poll does.
func BenchmarkShared_Visibility(b *testing.B) {
	sbSkipShort(b)
	srv := pgtest.Start(b)
	url := srv.NewDB(b)
	const n = 10_000
	stA, stB, boltSt := sbPG(b, url), sbPG(b, url), sbBolt(b)
	sbLoad(b, "u", n, stA, boltSt)
	sbAnalyze(b, url)
	cfg := sbConfig()
	a, rb, bolt := sbService(b, stA, cfg), sbService(b, stB, cfg), sbService(b, boltSt, cfg)
	ctx := context.Background()
	if _, err := rb.Retrieve(ctx, Query{Namespace: "u", Text: "w1"}); err != nil { // B builds u
		b.Fatal(err)
	}
	if got := rb.Stats("u").Indexed; got != n {
		b.Fatalf("replica B indexed %d of %d", got, n)
	}
	gen := newSBGen("u")
	gen.k = n // new IDs from here on
	word := 0
	next := func() (store.Item, string) {
		word++
		w := fmt.Sprintf("zvis%d", word)
		return gen.item(w), w
	}

	b.Run("ReadYourWrites", func(b *testing.B) {
		var lat [2]sbLat
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			it, w := next()
			interleave(i, func(which int) {
				writer, reader := a, rb
				if which == 1 {
					writer, reader = bolt, bolt
				}
				if _, err := writer.Add(ctx, []store.Item{it}); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				r, err := reader.Retrieve(ctx, Query{Namespace: "u", Text: w})
				lat[which] = append(lat[which], time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				// The default ranking adds the memory's session neighbours
				// after it; the memory itself must come first.
				if len(r.Candidates) == 0 || r.Candidates[0].ID != it.Memory.ID {
					b.Fatalf("search for %q right after its write: %v, want %s first", w, candIDs(r.Candidates), it.Memory.ID)
				}
			})
			i++
		}
		sbReport(b, lat[0], lat[1], "µs")
	})

	b.Run("Follow", func(b *testing.B) {
		var lat sbLat
		b.ReportAllocs()
		for b.Loop() {
			it, _ := next()
			before := rb.Stats("u").Indexed
			if _, err := a.Add(ctx, []store.Item{it}); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			for rb.Stats("u").Indexed == before {
				if time.Since(t0) > 30*time.Second {
					b.Fatalf("replica B did not follow a write within 30 s (Poll %v)", cfg.Follow.Poll)
				}
				time.Sleep(100 * time.Microsecond)
			}
			lat = append(lat, time.Since(t0))
		}
		b.ReportMetric(durMS(lat.q(0.5)), "p50-ms")
		b.ReportMetric(durMS(lat.q(0.99)), "p99-ms")
		b.ReportMetric(durMS(lat.q(1)), "max-ms")
		b.ReportMetric(float64(lat.q(0.5))/float64(cfg.Follow.Poll), "p50/poll")
	})
}
