package serve

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// memoryInfo is /info's memory section.
func (s *Server) memoryInfo() *api.MemoryInfo {
	e := s.mem
	mi := &api.MemoryInfo{Shared: e.Shared(), VectorDim: e.Dim()}
	if mi.Shared {
		cfg, f := e.Config(), e.Follow()
		mi.IndexMemoryBytes, mi.CatchUpS = cfg.IndexMemory, cfg.CatchUp.Seconds()
		mi.ResidentNamespaces, mi.IndexBytes = f.Loaded, f.Bytes
	}
	return mi
}

// watchMemory exports a shared-store engine's follower (retrieval.Engine.
// Follow), read at scrape time: what this replica caches and how much work
// following the database costs it.
func (m *Metrics) watchMemory(read func() retrieval.FollowStats) {
	gauge := func(name, help string, v func(retrieval.FollowStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	counter := func(name, help string, v func(retrieval.FollowStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(read()) })
	}
	m.Registry.MustRegister(
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
