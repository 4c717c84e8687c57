package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// BenchmarkSearchRanking times a memory search with the default ranking,
// and with the default without its field-aware matching, against plain
// BM25 in the same run, on 10k and 100k synthetic memories (12
// Zipf-distributed words each, sessions of 20 turns as sources, each turn
// said by one of its session's two speakers out of 100 names in metadata,
// times spread over a year), and reports the ratios to plain BM25; the
// default's ("ratio") must stay at most 1.5: the lexical stages may not
// make a memory search much slower than plain BM25. Half the queries name a speaker, and one in eight a
// date ("March 5, 2025"), as LoCoMo's questions do (almost all name a
// person, 11% a month or year).
//
//	go test ./retrieval -run '^$' -bench SearchRanking -benchtime 2000x
func BenchmarkSearchRanking(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			e := newService(b, openStore(b, ""), nil, DefaultConfig())
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
					session := k / 20
					speaker := fmt.Sprintf("n%d", (session*2+k%2)%100)
					items[j] = store.Item{Memory: memory.Memory{Namespace: "u", ID: fmt.Sprintf("m%07d", k),
						Text: strings.Join(words, " "), Source: fmt.Sprintf("s%d", session),
						Time:     day0.Add(time.Duration(k) * 365 * 24 * time.Hour / time.Duration(n)),
						Metadata: memory.Strings(map[string]string{"speaker": speaker})}}
				}
				if _, err := e.Add(ctx, items); err != nil {
					b.Fatal(err)
				}
			}
			queries := make([]string, 256)
			for i := range queries {
				q := fmt.Sprintf("w%d w%d w%d w%d", rng.IntN(2000), rng.IntN(2000), zipf.Uint64(), rng.IntN(20000))
				if i%2 == 0 {
					q = fmt.Sprintf("n%d ", rng.IntN(100)) + q
				}
				if i%8 == 1 {
					q += " in March 5, 2025"
				}
				queries[i] = q
			}
			noFields := lexrank.DefaultRanking()
			noFields.Fields = lexrank.Fields{}
			rankings := []lexrank.Ranking{lexrank.PlainBM25(), lexrank.DefaultRanking(), noFields}
			names := []string{"bm25", "default", "nofields"}
			var n0 [3]int
			for _, q := range queries {
				for r := range rankings {
					res, _ := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: q, Ranking: &rankings[r]}})
					n0[r] += res.Retrieved
				}
			}
			b.Logf("candidates per search: bm25 %.1f, default %.1f, default without fields %.1f", float64(n0[0])/256, float64(n0[1])/256, float64(n0[2])/256)
			var took [3]time.Duration
			b.ResetTimer()
			for i := range b.N {
				q := queries[i%len(queries)]
				for r := range rankings {
					t0 := time.Now()
					if _, err := e.Search(ctx, SearchRequest{Query: Query{Namespace: "u", Text: q, Ranking: &rankings[r]}}); err != nil {
						b.Fatal(err)
					}
					took[r] += time.Since(t0)
				}
			}
			for r, name := range names {
				b.ReportMetric(float64(took[r].Microseconds())/float64(b.N), name+"-µs/search")
			}
			b.ReportMetric(float64(took[1])/float64(took[0]), "ratio")
			b.ReportMetric(float64(took[2])/float64(took[0]), "nofields-ratio")
		})
	}
}
