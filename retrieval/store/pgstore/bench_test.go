package pgstore

import (
	"fmt"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// benchDim is the vector dimension of the benchmarks' memories (a small
// embedding model's).
const benchDim = 384

// BenchmarkPut_Single: one memory with its vector per transaction, on the
// shared test server (fsync on: each Put waits for its commit's flush).
func BenchmarkPut_Single(b *testing.B) {
	s := open(b, newDB(b), Options{Dimension: benchDim})
	v := vec(1, benchDim)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := s.Put(mem("bench", fmt.Sprint("m", i), "a memory of moderate length about the benchmark"), v); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkPut_Batch100: PutBatch of 100 memories with vectors per
// transaction.
func BenchmarkPut_Batch100(b *testing.B) {
	s := open(b, newDB(b), Options{Dimension: benchDim})
	v := vec(1, benchDim)
	items := make([]store.Item, 100)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for k := range items {
			items[k] = store.Item{Memory: mem("bench", fmt.Sprint("m", n), "a memory of moderate length about the benchmark"), Vector: v}
			n++
		}
		if err := s.PutBatch(items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "memories/s")
}
