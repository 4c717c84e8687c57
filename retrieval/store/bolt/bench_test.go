package bolt

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Ingest benchmarks: durable (fsync'ed) writes of memories with a
// 1024-dimension embedding (Qwen3-Embedding-0.6B size) and a ~300-byte
// text, one Put per memory vs PutBatch of 100. Each batch sub-benchmark
// also times a fixed run of single Puts on its own store in the same run,
// so "x-single" (batched memories/s over single memories/s) is a ratio
// measured under the same disk and load:
//
//	go test -run '^$' -bench Store_Ingest -benchtime 3s ./retrieval/store/bolt
//
// What it shows: each commit costs an fsync of bbolt's pages and meta
// page, so a writer should batch (the memory service's bulk import does).

const benchDim = 1024

func benchItem(i int, v []float32) store.Item {
	id := fmt.Sprintf("m%09d", i)
	m := memory.Memory{
		ID: id, Namespace: "bench",
		Text:   strings.Repeat("Caroline went to the support group on Tuesday; ", 6) + id,
		Time:   time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC).Add(time.Duration(i) * time.Minute),
		Source: "locomo/conv-26", Metadata: memory.Strings(map[string]string{"kind": "dialog", "speaker": "Caroline"}),
	}
	return store.Item{Memory: m, Vector: v}
}

// putSingles writes n memories one durable Put each, returning memories/s.
func putSingles(b *testing.B, s *Store, start, n int, v []float32) float64 {
	b.Helper()
	t0 := time.Now()
	for i := range n {
		it := benchItem(start+i, v)
		if err := s.Put(it.Memory, it.Vector); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(t0).Seconds()
}

func BenchmarkStore_Ingest(b *testing.B) {
	v := vec(1, benchDim)
	b.Run("single", func(b *testing.B) {
		s, _ := openTemp(b, Options{})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			it := benchItem(i, v)
			if err := s.Put(it.Memory, it.Vector); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "memories/s")
	})
	for _, size := range []int{10, 100} {
		b.Run(fmt.Sprintf("batch%d", size), func(b *testing.B) {
			s, _ := openTemp(b, Options{})
			// Baseline: 50 single Puts on a separate store, same run.
			base, _ := openTemp(b, Options{})
			single := putSingles(b, base, 0, 50, v)
			items := make([]store.Item, size)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for j := range items {
					items[j] = benchItem(n+j, v)
				}
				if err := s.PutBatch(items); err != nil {
					b.Fatal(err)
				}
				n += size
			}
			rate := float64(n) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "memories/s")
			b.ReportMetric(single, "single-memories/s")
			b.ReportMetric(rate/single, "x-single")
		})
	}
}
