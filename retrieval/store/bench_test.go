package store

import (
	"fmt"
	"testing"
)

// BenchmarkStore_Put measures durable (fsync'ed) single-memory puts with a
// 384-dimension vector.
func BenchmarkStore_Put(b *testing.B) {
	s, _ := openTemp(b, Options{})
	v := vec(1, 384)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Put(mem("bench", fmt.Sprintf("m%09d", i)), v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkStore_PutBatch100 measures durable 100-memory batches.
func BenchmarkStore_PutBatch100(b *testing.B) {
	s, _ := openTemp(b, Options{})
	v := vec(1, 384)
	items := make([]Item, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range items {
			items[j] = Item{Memory: mem("bench", fmt.Sprintf("m%09d-%03d", i, j)), Vector: v}
		}
		if err := s.PutBatch(items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(items))/b.Elapsed().Seconds(), "memories/s")
}
