package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// BenchmarkSearchRanking times a memory search with the default ranking
// against plain BM25 in the same run, on 10k and 100k synthetic memories
// (12 Zipf-distributed words each, sessions of 20 turns as sources), and
// reports the ratio, which must stay at most 1.5: the context stage may
// not make a memory search much slower than plain BM25.
//
//	go test ./retrieval -run '^$' -bench SearchRanking -benchtime 2000x
func BenchmarkSearchRanking(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			e := newEngine(b, openStore(b, ""), nil, DefaultConfig())
			rng := rand.New(rand.NewPCG(1, 2))
			zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, 20_000)
			word := func() string { return fmt.Sprintf("w%d", zipf.Uint64()) }
			ctx := context.Background()
			const batch = 1000
			for start := 0; start < n; start += batch {
				items := make([]store.Item, batch)
				for j := range items {
					k := start + j
					words := make([]string, 12)
					for w := range words {
						words[w] = word()
					}
					items[j] = store.Item{Memory: memory.Memory{Namespace: "u", ID: fmt.Sprintf("m%07d", k),
						Text: strings.Join(words, " "), Source: fmt.Sprintf("s%d", k/20), Time: day0.Add(time.Duration(k) * time.Second)}}
				}
				if _, err := e.Add(ctx, items); err != nil {
					b.Fatal(err)
				}
			}
			queries := make([]string, 256)
			for i := range queries {
				queries[i] = fmt.Sprintf("w%d w%d w%d w%d", rng.IntN(2000), rng.IntN(2000), zipf.Uint64(), rng.IntN(20000))
			}
			plain, def := PlainBM25(), DefaultRanking()
			var nPlain, nDef int
			for _, q := range queries {
				rp, _ := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: q, Ranking: &plain}})
				rd, _ := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: q, Ranking: &def}})
				nPlain, nDef = nPlain+rp.Retrieved, nDef+rd.Retrieved
			}
			b.Logf("candidates per search: bm25 %.1f, default %.1f", float64(nPlain)/256, float64(nDef)/256)
			var tPlain, tDef time.Duration
			b.ResetTimer()
			for i := range b.N {
				q := queries[i%len(queries)]
				for _, r := range []*Ranking{&plain, &def} {
					t0 := time.Now()
					if _, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: q, Ranking: r}}); err != nil {
						b.Fatal(err)
					}
					if r == &plain {
						tPlain += time.Since(t0)
					} else {
						tDef += time.Since(t0)
					}
				}
			}
			b.ReportMetric(float64(tPlain.Microseconds())/float64(b.N), "bm25-µs/search")
			b.ReportMetric(float64(tDef.Microseconds())/float64(b.N), "default-µs/search")
			b.ReportMetric(float64(tDef)/float64(tPlain), "ratio")
		})
	}
}
