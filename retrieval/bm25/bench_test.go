package bm25

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// Benchmarks:
//
//	go test -run '^$' -bench 'BM25' -benchtime 2000x ./retrieval/bm25
//	BM25_1M=1 go test -run '^$' -bench 'BM25_Search/1M' ./retrieval/bm25   # optional
//
// The corpus is synthetic: a seeded vocabulary of 20k pseudo-words drawn
// with a Zipf distribution (s 1.1), 10-60 words per memory (dialog turns),
// queries of 2-6 words from the same distribution.

type synth struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newSynth(seed int64) *synth {
	r := rand.New(rand.NewSource(seed))
	vocab := make([]string, 20000)
	const letters = "bcdfghjklmnprstvwz"
	const vowels = "aeiou"
	for i := range vocab {
		var b strings.Builder
		for j := 0; j < 2+r.Intn(3); j++ {
			b.WriteByte(letters[r.Intn(len(letters))])
			b.WriteByte(vowels[r.Intn(len(vowels))])
		}
		vocab[i] = b.String()
	}
	return &synth{r: r, zipf: rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1)), vocab: vocab}
}

func (s *synth) text(minW, maxW int) string {
	n := minW + s.r.Intn(maxW-minW+1)
	w := make([]string, n)
	for i := range w {
		w[i] = s.vocab[s.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func buildSynth(b *testing.B, n int) (*Index, *synth) {
	b.Helper()
	s := newSynth(1)
	x := newIndex(b)
	start := time.Now()
	for i := range n {
		x.Add(fmt.Sprintf("mem-%d", i), s.text(10, 60))
	}
	b.Logf("built %d memories in %v (%.0f docs/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	return x, s
}

func BenchmarkBM25_Search(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			if sz.n >= 1_000_000 && !bench1M() {
				b.Skip("set BM25_1M=1 to run the 1M benchmark")
			}
			x, s := buildSynth(b, sz.n)
			queries := make([]string, 1000)
			for i := range queries {
				queries[i] = s.text(2, 6)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				_ = x.Search(queries[i%len(queries)], 10)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

func BenchmarkBM25_Ingest(b *testing.B) {
	s := newSynth(2)
	texts := make([]string, 10000)
	for i := range texts {
		texts[i] = s.text(10, 60)
	}
	x := newIndex(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x.Add(fmt.Sprintf("mem-%d", i), texts[i%len(texts)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

func bench1M() bool { return os.Getenv("BM25_1M") != "" }
