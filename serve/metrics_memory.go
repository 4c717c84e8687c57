package serve

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// register adds collectors, once: a second server given the same Metrics
// and memory service would only register the same series again.
func (m *Metrics) register(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := m.Registry.Register(c); err != nil {
			var dup prometheus.AlreadyRegisteredError
			if !errors.As(err, &dup) {
				panic(err) // a malformed collector: programmer error
			}
		}
	}
}

// watchService exports the memory service's index totals
// (retrieval.Service.Totals), read at scrape time, for either store.
func (m *Metrics) watchService(read func() retrieval.Totals) {
	gauge := func(name, help string, v func(retrieval.Totals) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v(read())) })
	}
	m.register(
		gauge("rerankd_memory_namespaces", "Namespaces whose indexes this process holds.",
			func(t retrieval.Totals) int { return t.Namespaces }),
		gauge("rerankd_memory_namespaces_building", "Namespaces whose indexes are still being built (searches there scan the store).",
			func(t retrieval.Totals) int { return t.Building }),
		gauge("rerankd_memory_indexed", "Memories in the BM25 indexes.",
			func(t retrieval.Totals) int { return t.Indexed }),
		gauge("rerankd_memory_vectors", "Memories in the vector indexes.",
			func(t retrieval.Totals) int { return t.Vectors }),
		gauge("rerankd_memory_vector_index_from_snapshot", "Namespaces whose vector index was loaded from a snapshot file at start.",
			func(t retrieval.Totals) int { return t.FromSnapshot }),
		gauge("rerankd_memory_vector_index_rebuilt", "Namespaces whose vector index was rebuilt from the store at start.",
			func(t retrieval.Totals) int { return t.Rebuilt }),
		gauge("rerankd_memory_snapshot_misses", "Namespaces whose snapshot file was refused at start (missing, stale, damaged, mismatched); the log says why.",
			func(t retrieval.Totals) int { return t.SnapshotMisses }),
		gauge("rerankd_memory_backfilled", "Memories the back-fill gave a vector since start.",
			func(t retrieval.Totals) int { return t.Backfilled }),
		gauge("rerankd_memory_backfill_failed", "Memories whose back-fill embedding failed since start (lexical only until a later start).",
			func(t retrieval.Totals) int { return t.BackfillFailed }),
	)
}

// memoryInfo is /info's memory section.
func (s *Server) memoryInfo() *api.MemoryInfo {
	svc := s.mem
	mi := &api.MemoryInfo{Shared: svc.Shared(), VectorDim: svc.Dim()}
	if mi.Shared {
		cfg, f := svc.Config(), svc.Follow()
		mi.IndexMemoryBytes, mi.CatchUpS = cfg.Follow.IndexMemory, cfg.Follow.CatchUp.Seconds()
		mi.ResidentNamespaces, mi.IndexBytes = f.Loaded, f.Bytes
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := svc.Ping(ctx); err != nil {
			mi.StoreError = retrieval.Describe(err)
		}
	}
	return mi
}

// watchFollower exports a shared-store service's follower (retrieval.Service.
// Follow), read at scrape time: what this replica caches and how much work
// following the database costs it.
func (m *Metrics) watchFollower(read func() retrieval.FollowStats) {
	gauge := func(name, help string, v func(retrieval.FollowStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	counter := func(name, help string, v func(retrieval.FollowStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	m.register(
		gauge("rerankd_memory_namespaces_resident", "Namespaces whose indexes this replica holds (shared store).",
			func(s retrieval.FollowStats) float64 { return float64(s.Loaded) }),
		gauge("rerankd_memory_index_bytes", "Estimated bytes of the resident namespaces' indexes (bounded by --index-memory).",
			func(s retrieval.FollowStats) float64 { return float64(s.Bytes) }),
		counter("rerankd_memory_index_builds_total", "Namespace index builds from the shared store (first use, or use after eviction).",
			func(s retrieval.FollowStats) float64 { return float64(s.Builds) }),
		counter("rerankd_memory_index_evictions_total", "Namespaces dropped to stay within --index-memory.",
			func(s retrieval.FollowStats) float64 { return float64(s.Evictions) }),
		counter("rerankd_memory_changes_applied_total", "Changes applied from the shared store's change sequence (this replica's writes included).",
			func(s retrieval.FollowStats) float64 { return float64(s.Changes) }),
		counter("rerankd_memory_snapshot_loads_total", "Namespace builds whose vector index was loaded from the shared store's snapshot.",
			func(s retrieval.FollowStats) float64 { return float64(s.SnapshotLoads) }),
		counter("rerankd_memory_snapshot_saves_total", "Vector index snapshots this replica saved to the shared store.",
			func(s retrieval.FollowStats) float64 { return float64(s.SnapshotSaves) }),
	)
}
