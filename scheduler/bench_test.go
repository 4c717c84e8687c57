package scheduler

import (
	"context"
	"fmt"
	"testing"
)

// instantEngine returns zeros at once: what is left is the scheduler's own
// cost.
type instantEngine struct{}

func (instantEngine) Logits(_ context.Context, seqs, _ [][]int) ([]float32, error) {
	return make([]float32, len(seqs)), nil
}

// BenchmarkScheduler_Submit measures the scheduler's overhead per pair:
// queueing, batching, delivery. MaxWait is 0 so that no benchmark time is
// spent waiting for batches to fill.
func BenchmarkScheduler_Submit(b *testing.B) {
	for _, pairs := range []int{1, 16} {
		seqs := make([][]int, pairs)
		for i := range seqs {
			seqs[i] = seq(1, 64+i)
		}
		run := func(b *testing.B, parallel bool) {
			cfg := DefaultConfig()
			cfg.MaxWait = 0
			s, err := New(instantEngine{}, cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close(context.Background()) }()
			b.ReportAllocs()
			b.ResetTimer()
			if parallel {
				b.SetParallelism(8) // 8 goroutines per core: requests pool
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := s.Submit(context.Background(), seqs, nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			} else {
				for b.Loop() {
					if _, err := s.Submit(context.Background(), seqs, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pairs), "ns/pair")
		}
		b.Run(fmt.Sprintf("serial/pairs=%d", pairs), func(b *testing.B) { run(b, false) })
		b.Run(fmt.Sprintf("parallel/pairs=%d", pairs), func(b *testing.B) { run(b, true) })
	}
}
