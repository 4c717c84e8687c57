package serve

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scoring"
)

// Metrics are the server's Prometheus collectors on their own registry. The
// scheduler reports batches and queue depth through the same value (it is
// the scheduler's Observer).
type Metrics struct {
	Registry *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	tokenize    prometheus.Histogram
	queue       prometheus.Histogram
	inference   prometheus.Histogram
	pairs       *prometheus.CounterVec
	queueDepth  prometheus.Gauge
	batchRows   prometheus.Histogram
	batchTokens *prometheus.HistogramVec
	calls       prometheus.Histogram
	engineCall  prometheus.Histogram
	pairWait    prometheus.Histogram

	embedTexts  prometheus.Counter
	embedTokens prometheus.Counter
	embedQueue  prometheus.Gauge
	embedWait   prometheus.Histogram
	embedRun    prometheus.Histogram
}

// NewMetrics creates and registers the collectors.
func NewMetrics() *Metrics {
	lat := prometheus.ExponentialBuckets(0.0005, 2, 18) // 0.5 ms .. ~65 s
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rerankd_requests_total",
			Help: "HTTP requests by route and outcome (status code)."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rerankd_request_duration_seconds",
			Help: "HTTP request duration by route and outcome.", Buckets: lat}, []string{"route", "code"}),
		tokenize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_tokenization_duration_seconds",
			Help: "Time to build and tokenize a request's prompts.", Buckets: lat}),
		queue: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_queue_duration_seconds",
			Help: "Time a request waited before its first pair ran.", Buckets: lat}),
		inference: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_inference_duration_seconds",
			Help: "Inference time per request.", Buckets: lat}),
		pairs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rerankd_pairs_scored_total",
			Help: "Query-document pairs scored, by backend."}, []string{"backend"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rerankd_queue_pairs",
			Help: "Pairs waiting in the scheduler queue."}),
		batchRows: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_batch_size",
			Help: "Rows (pairs) per engine call.", Buckets: prometheus.ExponentialBuckets(1, 2, 8)}),
		batchTokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rerankd_batch_tokens",
			Help: "Tokens per engine call: real, and computed (the engine's cost: packed rows and a shared prefix once for the shared-prefix engine, rows x longest for one that pads).", Buckets: prometheus.ExponentialBuckets(16, 2, 12)},
			[]string{"kind"}),
		calls: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_request_engine_calls",
			Help: "Engine calls that carried a request's pairs (1 when they fit one call's budget).", Buckets: []float64{1, 2, 3, 4, 8, 16, 32}}),
		engineCall: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_engine_call_duration_seconds",
			Help: "Duration of one engine call (batch).", Buckets: lat}),
		pairWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_pair_wait_seconds",
			Help: "Time from submit to the engine call carrying a pair.", Buckets: lat}),
	}
	m.embedTexts = prometheus.NewCounter(prometheus.CounterOpts{Name: "rerankd_embedded_texts_total",
		Help: "Texts embedded for /v1/embeddings and /embed."})
	m.embedTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "rerankd_embedded_tokens_total",
		Help: "Tokens embedded for /v1/embeddings and /embed (prompts and template included)."})
	m.embedQueue = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rerankd_embed_queue_texts",
		Help: "Texts waiting or being embedded (served routes and the memory search together)."})
	m.embedWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_embed_queue_wait_seconds",
		Help: "Time an embedding call waited for the model.", Buckets: lat})
	m.embedRun = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rerankd_embed_call_duration_seconds",
		Help: "Duration of one embedding call (all its batches).", Buckets: lat})
	m.Registry.MustRegister(m.embedTexts, m.embedTokens, m.embedQueue, m.embedWait, m.embedRun)
	m.Registry.MustRegister(m.requests, m.duration, m.tokenize, m.queue, m.inference, m.pairs, m.queueDepth,
		m.batchRows, m.batchTokens, m.calls, m.engineCall, m.pairWait)
	return m
}

// WatchPrefixCache exports the shared-prefix engine's cross-request K/V
// cache (model.PrefixSession.CacheStats), read at scrape time: how often it
// served a prefix, how many prefix tokens it saved, and its size.
func (m *Metrics) WatchPrefixCache(read func() rerank.PrefixCacheStats) {
	counter := func(name, help string, v func(rerank.PrefixCacheStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v(read())) })
	}
	gauge := func(name, help string, v func(rerank.PrefixCacheStats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v(read())) })
	}
	m.Registry.MustRegister(
		counter("rerankd_prefix_cache_lookups_total", "Engine calls that consulted the prefix K/V cache.",
			func(s rerank.PrefixCacheStats) int64 { return s.Lookups }),
		counter("rerankd_prefix_cache_hits_total", "Engine calls that reused at least one cached prefix token.",
			func(s rerank.PrefixCacheStats) int64 { return s.Hits }),
		counter("rerankd_prefix_cache_reused_tokens_total", "Prefix tokens served from the cache instead of computed.",
			func(s rerank.PrefixCacheStats) int64 { return s.ReusedTokens }),
		counter("rerankd_prefix_cache_computed_tokens_total", "Prefix tokens computed by calls that consulted the cache.",
			func(s rerank.PrefixCacheStats) int64 { return s.ComputedTokens }),
		gauge("rerankd_prefix_cache_bytes", "Bytes of keys/values the cache holds.",
			func(s rerank.PrefixCacheStats) int64 { return s.Bytes }),
		gauge("rerankd_prefix_cache_entries", "Prefixes the cache holds.",
			func(s rerank.PrefixCacheStats) int64 { return int64(s.Entries) }),
	)
}

func (m *Metrics) observeRequest(route, code string, d time.Duration) {
	m.requests.WithLabelValues(route, code).Inc()
	m.duration.WithLabelValues(route, code).Observe(d.Seconds())
}

func (m *Metrics) observeScored(backend string, s scoring.Scored, pairs int) {
	m.tokenize.Observe(s.Timing.Tokenize.Seconds())
	m.queue.Observe(s.Timing.Queue.Seconds())
	m.inference.Observe(s.Timing.Inference.Seconds())
	if s.Batches > 0 {
		m.calls.Observe(float64(s.Batches))
	}
	m.pairs.WithLabelValues(backend).Add(float64(pairs))
}

// The scheduler's Observer methods.

// QueueDepth implements scheduler.Observer.
func (m *Metrics) QueueDepth(pairs int) { m.queueDepth.Set(float64(pairs)) }

// BatchFormed implements scheduler.Observer.
func (m *Metrics) BatchFormed(rows, realTokens, computedTokens int) {
	m.batchRows.Observe(float64(rows))
	m.batchTokens.WithLabelValues("real").Observe(float64(realTokens))
	m.batchTokens.WithLabelValues("computed").Observe(float64(computedTokens))
}

// EngineCall implements scheduler.Observer.
func (m *Metrics) EngineCall(d time.Duration, _ int, _ error) { m.engineCall.Observe(d.Seconds()) }

// PairWait implements scheduler.Observer.
func (m *Metrics) PairWait(d time.Duration) { m.pairWait.Observe(d.Seconds()) }

func (m *Metrics) observeEmbedded(texts, tokens int) {
	m.embedTexts.Add(float64(texts))
	m.embedTokens.Add(float64(tokens))
}

// EmbedQueued implements embed.QueueObserver.
func (m *Metrics) EmbedQueued(texts int) { m.embedQueue.Set(float64(texts)) }

// EmbedCall implements embed.QueueObserver.
func (m *Metrics) EmbedCall(_ int, wait, run time.Duration, err error) {
	m.embedWait.Observe(wait.Seconds())
	if err == nil {
		m.embedRun.Observe(run.Seconds())
	}
}
