package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// benchResult is the JSON contract of `rerankd-bench bench`. "Uncached" is
// model.onnx batched by the Scorer (length-sorted, token budget): the path
// before the shared-prefix graph, and the reference for score errors.
type benchResult struct {
	Requests          int     `json:"requests"`
	Pairs             int     `json:"pairs"`
	MeanTokensPerPair float64 `json:"mean_tokens_per_pair"`
	MeanPrefixTokens  float64 `json:"mean_prefix_tokens"` // shared by a request's pairs (system + instruction + query)
	SharedPrefix      bool    `json:"shared_prefix"`      // our path used the folder's shared-prefix graph
	FusedAttention    bool    `json:"fused_attention"`    // in its CPU attention form (--attention-form)
	// PrefixCache: our path kept prefix K/V across requests; the timed
	// requests reused MeanPrefixReused of their MeanPrefixTokens from it
	// (the system prompt and instruction, primed by a warm-up request with
	// another query, as in a running server).
	PrefixCache      bool    `json:"prefix_cache"`
	MeanPrefixReused float64 `json:"mean_prefix_tokens_reused"`
	// NoCachePairsPerS is our path with the cache bypassed, timed in turn
	// with the others; PrefixCacheGain = PairsPerS / NoCachePairsPerS.
	// PrefixCacheGainMedian: the median of the per-request ratios.
	PrefixCacheGainMedian float64 `json:"prefix_cache_gain_median,omitempty"`
	NoCachePairsPerS      float64 `json:"pairs_per_s_no_prefix_cache,omitempty"`
	PrefixCacheGain       float64 `json:"prefix_cache_gain,omitempty"`
	PairsPerS             float64 `json:"pairs_per_s"`          // our path: end to end through the scorer
	BaselinePairsPerS     float64 `json:"baseline_pairs_per_s"` // same pairs, one model.onnx call per pair
	UncachedPairsPerS     float64 `json:"uncached_pairs_per_s"` // same pairs, model.onnx batched by the scorer
	Speedup               float64 `json:"speedup"`              // ours / baseline
	// SpeedupBound is what a perfect shared-prefix cache can give at equal
	// cost per token: the baseline's tokens over the useful ones (each
	// request's prefix once, each continuation once). Float32 speedups
	// beyond it need cheaper tokens (int8), not more caching.
	SpeedupBound      float64 `json:"speedup_bound_same_cost_per_token"`
	SpeedupVsUncached float64 `json:"speedup_vs_uncached"` // ours / uncached
	// SpeedupMedian is the median over requests of baseline time / our
	// time for the same request: on a shared machine whose speed drifts
	// for tens of seconds, one slow stretch moves the totals' ratio
	// (Speedup) but not this.
	SpeedupMedian float64 `json:"speedup_median_per_request"`
	UsefulGFLOPs  float64 `json:"useful_gflops,omitempty"`
	PeakGFLOPs    float64 `json:"peak_gflops"`          // ONNX Runtime MatMul chain, same session settings
	Efficiency    float64 `json:"efficiency,omitempty"` // useful / peak
	// ComputedGFLOPs counts the matrix FLOPs our path executes: the
	// contract's useful FLOPs less the prefix tokens served from the
	// cross-request cache and the last layer's work for tokens whose only
	// use is their keys and values. Efficiency counts those skipped FLOPs
	// as done, so EfficiencyComputed (computed / peak) is the figure that
	// says how well the machine is used.
	ComputedGFLOPs     float64 `json:"computed_gflops,omitempty"`
	EfficiencyComputed float64 `json:"efficiency_computed,omitempty"`
	// EffComputedMedian is the median over requests of that request's
	// computed GFLOP/s over the peak measured right after it (600 ms of
	// the chain): the peak beside each measurement, not one taken minutes
	// later on a machine whose speed drifts. QuantEffComputedMedian is the
	// same against the quantised chain.
	EffComputedMedian      float64 `json:"efficiency_computed_median_per_request,omitempty"`
	QuantEffComputedMedian float64 `json:"quant_efficiency_computed_median_per_request,omitempty"`
	// BaselineEfficiency is the baseline's matrix and attention FLOPs (every
	// pair's whole prompt, one call each) per second over the peak, as the
	// median per request against the peak beside it. With
	// SpeedupBoundComputed (the baseline's FLOPs over ours) it bounds what
	// any scheduling of our FLOPs can reach here: SpeedupCeiling =
	// SpeedupBoundComputed / BaselineEfficiency is our speedup if every
	// FLOP we compute ran at the MatMul chain's peak. Speedup =
	// SpeedupCeiling × our efficiency (of the FLOPs that ran), so a target
	// speedup needs our efficiency at target / SpeedupCeiling. Float32
	// peaks only: omitted for quantised runs, whose FLOPs are cheaper.
	BaselineEfficiency   float64 `json:"baseline_efficiency_median_per_request,omitempty"`
	SpeedupBoundComputed float64 `json:"speedup_bound_computed_flops,omitempty"`
	SpeedupCeiling       float64 `json:"speedup_ceiling_at_peak,omitempty"`
	// Quant is how our path's weights are stored (fp32 or int8); the
	// baseline and the uncached reference are always float32, so the score
	// errors below include the quantisation error.
	Quant string `json:"quant"`
	// QuantPeakGFLOPs is the same MatMul chain with Quant's kernels, counted
	// in float FLOPs; QuantEfficiency = useful / it.
	QuantPeakGFLOPs   float64 `json:"quant_peak_gflops,omitempty"`
	QuantEfficiency   float64 `json:"quant_efficiency,omitempty"`
	QuantEffComputed  float64 `json:"quant_efficiency_computed,omitempty"`
	MeanAbsScoreError float64 `json:"mean_abs_score_error"` // ours vs uncached
	// Ranking agreement with the uncached float32 reference, per request:
	// mean Kendall tau of the orders and the share of requests whose top 5
	// is the same set. For a reranker these matter more than raw score error.
	// RefLogitStd is the standard deviation of the reference logits: a
	// logit error matters relative to how far apart the scores are (a random
	// model's are close together; a trained one separates relevant
	// memories by several units).
	RefLogitStd        float64 `json:"ref_logit_std"`
	KendallTau         float64 `json:"mean_kendall_tau"`
	Top5Agree          float64 `json:"top5_same_set"`
	MaxAbsScoreError   float64 `json:"max_abs_score_error"` // ours vs uncached, same pairs
	MaxAbsLogitError   float64 `json:"max_abs_logit_error"` // ours vs uncached
	MeanAbsLogitError  float64 `json:"mean_abs_logit_error"`
	BaselineScoreError float64 `json:"max_abs_score_error_vs_baseline"`
	// Tokens through the decoder's matrices per useful token (prefix once
	// per request, continuation per pair): padding and prefix recomputation
	// make it exceed 1.
	ComputedPerUseful         float64 `json:"computed_per_useful"`
	ComputedPerUsefulUncached float64 `json:"computed_per_useful_uncached"`
	// PaddingRatioUncached is padded slots / real tokens of the uncached
	// batches (ours computes no padding rows).
	PaddingRatioUncached float64 `json:"padding_ratio_uncached"`
	// PeakRSSMB is VmHWM after our path's warm-up request, before anything
	// else is loaded; PeakRSSAllMB at the end, with model.onnx open too.
	// Profile is --ort-profile's summary of our path's trace.
	Profile       *profileResult `json:"ort_profile,omitempty"`
	PeakRSSMB     float64        `json:"peak_rss_mb,omitempty"`
	PeakRSSAllMB  float64        `json:"peak_rss_all_mb,omitempty"`
	WeightFilesMB float64        `json:"weight_files_mb"` // model.onnx + model.onnx.data
	// Served: the same requests through the served composition (HTTP,
	// scheduler, engine, built by composeServer as `rerankd serve` builds
	// it, with its own engine and cache), one client, timed in turn with
	// the others. ServedRatio = ServedPairsPerS / PairsPerS (our direct
	// path); ServedRatioMedian is the median per request of direct time
	// over served time. ServedMaxAbsLogitDiff compares the two paths'
	// logits for the same pairs.
	ServedPairsPerS       float64 `json:"served_pairs_per_s,omitempty"`
	ServedRatio           float64 `json:"served_ratio,omitempty"`
	ServedRatioMedian     float64 `json:"served_ratio_median_per_request,omitempty"`
	ServedMaxAbsLogitDiff float64 `json:"served_max_abs_logit_diff,omitempty"`
	// EngineCallsPerRequest is the median number of engine calls that
	// carried a served request's pairs (the server's own metric);
	// DirectEngineCallsPerRequest the same for the direct path's batches.
	EngineCallsPerRequest       float64 `json:"engine_calls_per_request,omitempty"`
	DirectEngineCallsPerRequest float64 `json:"direct_engine_calls_per_request"`
	// ReadyS is the median over ReadyStartsS of process start to the first
	// 200 from /ready, each a fresh `rerankd serve` for this model with
	// these settings; ReadyPeakRSSMB the largest peak resident memory of
	// those processes when they became ready.
	ReadyS         float64   `json:"ready_s,omitempty"`
	ReadyStartsS   []float64 `json:"ready_starts_s,omitempty"`
	ReadyPeakRSSMB float64   `json:"ready_peak_rss_mb,omitempty"`
	// The same with --session-cache (a fresh folder: one start to write
	// the entry, not timed, then the timed ones).
	ReadyCachedS         float64   `json:"ready_s_session_cache,omitempty"`
	ReadyCachedStartsS   []float64 `json:"ready_starts_session_cache_s,omitempty"`
	ReadyCachedPeakRSSMB float64   `json:"ready_peak_rss_session_cache_mb,omitempty"`
	// ScoreError is this run's variant (Quant) against the uncached
	// float32 reference: the same figures as the error and ranking fields
	// above, in the layout `rerankd-bench quant-check` prints per variant.
	ScoreError         *variantError `json:"score_error,omitempty"`
	Threads            int           `json:"threads"`
	Engine             string        `json:"engine"`
	RandomWeightsNotes string        `json:"note"`
}

// variantError is one variant's error against float32: score (max_abs,
// mean_abs) and logit differences over the same pairs, and the ranking
// agreement per request.
type variantError struct {
	Variant      string  `json:"variant"`
	MaxAbs       float64 `json:"max_abs"`
	MeanAbs      float64 `json:"mean_abs"`
	MaxAbsLogit  float64 `json:"max_abs_logit"`
	MeanAbsLogit float64 `json:"mean_abs_logit"`
	KendallTau   float64 `json:"mean_kendall_tau"`
	Top5Agree    float64 `json:"top5_same_set"`
}

// runBench implements `rerankd-bench bench`: replays LoCoMo-like requests (a ~15
// token question against memories of ~20-80 tokens, default instruction)
// and measures our scoring path against a one-pair-per-call baseline, the
// uncached batched path and the machine's MatMul throughput, all in the
// same run, taking turns request by request.
func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (required); make bench generates a full-size one")
	candidates := fs.Int("candidates", 20, "memories per request")
	requests := fs.Int("requests", 5, "requests to replay")
	asJSON := fs.Bool("json", false, "print one JSON object")
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	quant := fs.String("quant", "fp32", "weights of our path: fp32 or a quantised variant the folder has (int8, int8-block32, ...: written by testmodel/convert); the baseline stays fp32. rerankd-bench quant-check compares every variant in one run")
	spinning := fs.Bool("spinning", true, "keep ONNX Runtime's idle threads spinning between runs (lower latency, busy cores)")
	seed := fs.Uint64("seed", 1, "workload seed")
	cacheMB := fs.Int("prefix-cache-mb", model.DefaultPrefixCacheMB, "our path's cross-request prefix K/V cache in MiB (0: off, to measure without it)")
	profile := fs.String("ort-profile", "", "write ONNX Runtime's per-node trace of our path to `PREFIX`_<date>.json (slows it slightly)")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	dev := device.Define(fs)
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	attnForm := fs.Bool("attention-form", true, "run the folder's CPU attention form of the shared-prefix graph where it has one, as serve does (false: the standard-op form, to compare)")
	served := fs.Bool("served", true, "also time the same requests through the served composition (HTTP, scheduler, engine), one client")
	readyStarts := fs.Int("ready-starts", 3, "fresh rerankd serve processes to time from start to /ready (0: skip)")
	memRequests := fs.Int("memory-requests", 100, "cross-encoder folders: requests sent to a fresh rerankd serve of each variant the folder has (fp32, int8, ...) to measure its peak resident memory at ready and after them, against the weights its graph uses (0: skip)")
	baselineBin := fs.String("baseline-bin", "", "cross-encoder folders: another build's rerankd `BINARY` whose server runs beside ours in the memory measurement, the two taking turns request by request: both builds' memory, pairs/s and logits in one run")
	baselineModel := fs.String("baseline-model", "", "the folder --baseline-bin serves (`DIR`; default --model): a conversion by that build")
	peakTime := fs.Duration("peak-time", 3*time.Second, "how long the MatMul-chain peak is measured after the requests (per kind of weights); the peak measured beside each request takes a fifth of it")
	var serveFlags serveFlagList
	fs.Var(&serveFlags, "serve-flag", "cross-encoder folders: a `FLAG` (--name=value) added to our rerankd serve in the memory measurement, not the baseline's; repeatable (to measure a serve setting against --baseline-bin)")
	compare := fs.String("compare", "", "cross-encoder folders only: a second conversion of the same checkpoint (another convert --encoder-fusion, say) whose batched path takes turns with ours request by request (`DIR`)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *dir == "" || *candidates < 1 || *requests < 1 || *cacheMB < 0 || *readyStarts < 0 || *memRequests < 0 || *peakTime <= 0 {
		return fmt.Errorf("%w: --model required; --candidates and --requests must be >= 1, --prefix-cache-mb, --ready-starts and --memory-requests >= 0, --peak-time > 0", errUsage)
	}
	if *baselineModel != "" && *baselineBin == "" {
		return fmt.Errorf("%w: --baseline-model needs --baseline-bin", errUsage)
	}
	if *baselineBin != "" {
		if fi, err := os.Stat(*baselineBin); err != nil || fi.IsDir() {
			return fmt.Errorf("%w: --baseline-bin %s: not a file", errUsage, *baselineBin)
		}
		if *memRequests == 0 {
			return fmt.Errorf("%w: --baseline-bin runs in the memory measurement: --memory-requests must be >= 1", errUsage)
		}
	}
	q, err := onnx.ParseQuant(*quant)
	if err != nil {
		return fmt.Errorf("%w: --quant: %w", errUsage, err)
	}
	if *profile != "" { // ONNX Runtime writes the trace only at the end: check its folder first
		if fi, err := os.Stat(filepath.Dir(*profile)); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: --ort-profile %s: its folder %s does not exist", errUsage, *profile, filepath.Dir(*profile))
		}
	}
	*ortLib = dev.ORTLib(*ortLib)
	st := servedSettings{dev: dev, dir: *dir, ortLib: *ortLib, tok: *tok, quant: q, threads: *threads, cacheMB: *cacheMB, standardAttn: !*attnForm}
	o := model.DefaultOptions()
	o.StandardAttention = !*attnForm
	o.RuntimeLib, o.Tokenizer, o.Session.IntraOpThreads, o.Session.Spinning = *ortLib, *tok, *threads, *spinning
	dev.Apply(&o.Session)
	o.Quant = q
	// Weights packed as serve packs them by default (--prepack auto), so
	// the direct path runs the session the served one runs.
	prepack, _ := app.ResolvePrepack("auto", q, false)
	o.Session.DisablePrepacking = !prepack
	o.Session.ProfilePrefix = *profile
	o.PrefixCacheMB = *cacheMB
	if enc, err := model.IsEncoderFolder(*dir); err != nil {
		return err
	} else if enc {
		return runEncoderBench(encoderBench{dir: *dir, requests: *requests, candidates: *candidates, starts: *readyStarts, quant: q,
			seed: *seed, served: *served, asJSON: *asJSON, opts: o, settings: st, profile: *profile, compare: *compare,
			memRequests: *memRequests, baselineBin: *baselineBin, baselineModel: *baselineModel, serveFlags: serveFlags, peakTime: *peakTime}, stdout, stderr)
	}
	if *compare != "" {
		return fmt.Errorf("%w: --compare: %s is not a cross-encoder folder (decoder graph forms: see docs/perf/graph-fusion.md)", errUsage, *dir)
	}
	if len(serveFlags) > 0 {
		return fmt.Errorf("%w: --serve-flag: %s is not a cross-encoder folder (only the encoders' memory measurement takes serve flags)", errUsage, *dir)
	}
	if *baselineBin != "" {
		return fmt.Errorf("%w: --baseline-bin: %s is not a cross-encoder folder (start-bench measures decoder folders' starts and memory)", errUsage, *dir)
	}
	benchStart := time.Now() // a trace written after this is ours
	// The last request only warms up: its query differs from the timed
	// ones, so the cache starts as a running server's would, holding the
	// system prompt and instruction but not the next query.
	reqs := benchWorkload(*requests+1, *candidates, *seed)
	warm := reqs[*requests]
	reqs = reqs[:*requests]
	ctx := context.Background()

	// Our default path (the shared-prefix graph when present) opens first,
	// in a fresh process, so the peak resident memory after its warm-up
	// request is its own.
	s, info, err := model.Open(*dir, o)
	if err != nil {
		return err
	}
	defer s.Close() //nolint:errcheck // measurements are already printed
	var starts, cachedStarts []readyStart
	if *readyStarts > 0 {
		// Each start is a fresh process, as when a replica is added; this
		// one has only opened its model (its errors come first) and sits
		// idle meanwhile.
		fmt.Fprintf(stderr, "timing %d starts of rerankd serve to /ready, without and with --session-cache...\n", *readyStarts)
		if starts, err = measureReady(context.Background(), st, *readyStarts); err != nil {
			return err
		}
		tmp, err := os.MkdirTemp("", "rerankd-bench-sessions-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp) //nolint:errcheck // a temporary folder
		cached := st
		cached.sessionCache = tmp
		if _, err = measureReady(context.Background(), cached, 1); err != nil { // writes the entry
			return err
		}
		if cachedStarts, err = measureReady(context.Background(), cached, *readyStarts); err != nil {
			return err
		}
	}
	r := benchResult{Requests: *requests, Threads: *threads, Engine: string(info.Engine), SharedPrefix: info.SharedPrefix, FusedAttention: info.FusedAttention, Quant: q.String(),
		PrefixCache:   info.PrefixCache,
		WeightFilesMB: float64(fileBytes(*dir, onnx.ModelFile, onnx.DataFile)) / 1e6,
		RandomWeightsNotes: "speed only: scores of a random-weight model carry no meaning; " +
			"same-run ratios are what to compare across machines"}
	acct, err := benchAccounting(s, reqs, info)
	if err != nil {
		return err
	}
	if _, err := s.Score(ctx, warm); err != nil {
		return err
	}
	r.PeakRSSMB = peakRSSMB()
	for _, st := range starts {
		r.ReadyStartsS = append(r.ReadyStartsS, st.Seconds)
		r.ReadyPeakRSSMB = max(r.ReadyPeakRSSMB, st.PeakMB)
	}
	r.ReadyS = median(r.ReadyStartsS)
	for _, st := range cachedStarts {
		r.ReadyCachedStartsS = append(r.ReadyCachedStartsS, st.Seconds)
		r.ReadyCachedPeakRSSMB = max(r.ReadyCachedPeakRSSMB, st.PeakMB)
	}
	r.ReadyCachedS = median(r.ReadyCachedStartsS)
	var srv *servedPath
	if *served {
		if srv, err = startServed(st, stderr); err != nil {
			return err
		}
		defer srv.stop()
		if _, _, _, err := srv.score(ctx, warm); err != nil {
			return err
		}
	}

	// model.onnx: one pair per call (baseline) and batched by the scorer
	// (uncached, the reference for score errors).
	plainOpts := o
	plainOpts.NoSharedPrefix, plainOpts.Quant = true, onnx.QuantNone
	plainOpts.Session.ProfilePrefix = ""
	plain, _, err := model.Open(*dir, plainOpts)
	if err != nil {
		return err
	}
	defer plain.Close() //nolint:errcheck // measurements are already printed
	baseCfg := o.Scorer
	baseCfg.MaxBatch = 1
	base, err := plain.WithConfig(baseCfg)
	if err != nil {
		return err
	}
	if _, err := plain.Score(ctx, warm); err != nil {
		return err
	}
	cacheBefore := prefixCacheStats(s)
	// The three paths take turns request by request, so a machine whose
	// load drifts (a shared one) slows them alike.
	fmt.Fprintf(stderr, "scoring %d requests x %d memories: ours (shared prefix: %v, fused attention: %v), one pair per call, uncached, in turn...\n",
		*requests, *candidates, info.SharedPrefix, info.FusedAttention)
	var ours, baseline, uncached, servedScores []rerank.Score
	var oursTime, baseTime, uncachedTime, noCacheTime, servedTime time.Duration
	var servedCalls, directCalls []int
	perReq := map[*time.Duration][]time.Duration{} // each path's time per request
	hidden := 1024
	if info.Config != nil {
		hidden = info.Config.HiddenSize
	}
	peakSess := o.Session
	peakSess.ProfilePrefix = ""
	meters, err := benchMeters(peakSess, q, hidden)
	if err != nil {
		return err
	}
	defer func() {
		for _, m := range meters {
			_ = m.Close()
		}
	}()
	var reqReused []int64
	reqPeaks := make([][]float64, len(meters)) // per meter, the peak measured beside each request
	bar := progress.New(stderr, int64(len(reqs)), "bench", progress.Items)
	for i, req := range reqs {
		if i > 0 {
			bar.Add(1) // the requests done so far; Finish counts the last
		}
		before := prefixCacheStats(s).ReusedTokens
		for _, p := range []struct {
			sc  *rerank.Scorer
			out *[]rerank.Score
			dur *time.Duration
		}{{s, &ours, &oursTime}, {base, &baseline, &baseTime}, {plain, &uncached, &uncachedTime}} {
			got, d, err := timeRequests(ctx, p.sc, []rerank.Request{req})
			if err != nil {
				return err
			}
			*p.out, *p.dur = append(*p.out, got...), *p.dur+d
			perReq[p.dur] = append(perReq[p.dur], d)
			if p.sc == s {
				reqReused = append(reqReused, prefixCacheStats(s).ReusedTokens-before)
			}
		}
		if srv != nil {
			got, d, calls, err := srv.score(ctx, req)
			if err != nil {
				return err
			}
			servedScores, servedTime = append(servedScores, got...), servedTime+d
			perReq[&servedTime] = append(perReq[&servedTime], d)
			servedCalls = append(servedCalls, calls)
		}
		prompts, err := s.Prompts(req)
		if err != nil {
			return err
		}
		directCalls = append(directCalls, len(s.Batches(prompts)))
		for i, m := range meters {
			g, err := m.Measure(*peakTime / 5)
			if err != nil {
				return err
			}
			reqPeaks[i] = append(reqPeaks[i], g)
		}
		if ps, ok := s.Engine().(*model.PrefixSession); ok && info.PrefixCache {
			// The same path with the cross-request cache bypassed, for the
			// cache's own same-run gain.
			ps.SetCacheBypass(true)
			_, d, err := timeRequests(ctx, s, []rerank.Request{req})
			ps.SetCacheBypass(false)
			if err != nil {
				return err
			}
			noCacheTime += d
			perReq[&noCacheTime] = append(perReq[&noCacheTime], d)
		}
	}
	bar.Finish()
	r.PeakRSSAllMB = peakRSSMB()
	reused := prefixCacheStats(s).ReusedTokens - cacheBefore.ReusedTokens
	r.MeanPrefixReused = float64(reused) / float64(*requests)
	if *profile != "" {
		// ONNX Runtime writes the trace when the session closes; our path
		// is done.
		if err := s.Close(); err != nil {
			return err
		}
		if r.Profile, err = readProfile(*profile, benchStart, median(reqPeaks[len(reqPeaks)-1])); err != nil {
			return err
		}
	}
	fmt.Fprintln(stderr, "measuring the MatMul-chain peak...")
	if r.PeakGFLOPs, err = meters[0].Measure(*peakTime); err != nil {
		return err
	}
	if q != onnx.QuantNone {
		if r.QuantPeakGFLOPs, err = meters[1].Measure(*peakTime); err != nil {
			return err
		}
	}

	r.Pairs = len(ours)
	for i, sc := range ours {
		r.MaxAbsScoreError = math.Max(r.MaxAbsScoreError, math.Abs(sc.Score-uncached[i].Score))
		r.MaxAbsLogitError = math.Max(r.MaxAbsLogitError, math.Abs(sc.Logit-uncached[i].Logit))
		r.BaselineScoreError = math.Max(r.BaselineScoreError, math.Abs(sc.Score-baseline[i].Score))
		r.MeanAbsScoreError += math.Abs(sc.Score-uncached[i].Score) / float64(len(ours))
		r.MeanAbsLogitError += math.Abs(sc.Logit-uncached[i].Logit) / float64(len(ours))
	}
	r.KendallTau, r.Top5Agree = rankAgreement(ours, uncached, *candidates)
	var sum, sumSq float64
	for _, u := range uncached {
		sum, sumSq = sum+u.Logit, sumSq+u.Logit*u.Logit
	}
	mean := sum / float64(len(uncached))
	r.RefLogitStd = math.Sqrt(max(sumSq/float64(len(uncached))-mean*mean, 0))
	r.MeanTokensPerPair = float64(acct.realTokens) / float64(r.Pairs)
	r.MeanPrefixTokens = float64(acct.prefixTokens) / float64(*requests)
	r.PairsPerS = float64(r.Pairs) / oursTime.Seconds()
	r.BaselinePairsPerS = float64(r.Pairs) / baseTime.Seconds()
	r.UncachedPairsPerS = float64(r.Pairs) / uncachedTime.Seconds()
	r.Speedup = r.PairsPerS / r.BaselinePairsPerS
	r.SpeedupMedian = medianRatio(perReq[&baseTime], perReq[&oursTime])
	if noCacheTime > 0 {
		r.NoCachePairsPerS = float64(r.Pairs) / noCacheTime.Seconds()
		r.PrefixCacheGain = r.PairsPerS / r.NoCachePairsPerS
		r.PrefixCacheGainMedian = medianRatio(perReq[&noCacheTime], perReq[&oursTime])
	}
	r.SpeedupVsUncached = r.PairsPerS / r.UncachedPairsPerS
	r.DirectEngineCallsPerRequest = medianInt(directCalls)
	if srv != nil {
		r.ServedPairsPerS = float64(r.Pairs) / servedTime.Seconds()
		r.ServedRatio = r.ServedPairsPerS / r.PairsPerS
		r.ServedRatioMedian = medianRatio(perReq[&oursTime], perReq[&servedTime])
		r.EngineCallsPerRequest = medianInt(servedCalls)
		for i, sc := range servedScores {
			r.ServedMaxAbsLogitDiff = math.Max(r.ServedMaxAbsLogitDiff, math.Abs(sc.Logit-ours[i].Logit))
		}
	}
	r.ScoreError = &variantError{Variant: r.Quant, MaxAbs: r.MaxAbsScoreError, MeanAbs: r.MeanAbsScoreError,
		MaxAbsLogit: r.MaxAbsLogitError, MeanAbsLogit: r.MeanAbsLogitError, KendallTau: r.KendallTau, Top5Agree: r.Top5Agree}
	r.SpeedupBound = float64(acct.realTokens) / float64(acct.useful)
	r.ComputedPerUseful = float64(acct.shared) / float64(acct.useful)
	if !r.SharedPrefix {
		r.ComputedPerUseful = float64(acct.plain) / float64(acct.useful)
	}
	r.ComputedPerUsefulUncached = float64(acct.plain) / float64(acct.useful)
	r.PaddingRatioUncached = float64(acct.plain-acct.realTokens) / float64(acct.realTokens)
	if acct.usefulFLOPs > 0 {
		r.UsefulGFLOPs = acct.usefulFLOPs / oursTime.Seconds() / 1e9
		r.Efficiency = r.UsefulGFLOPs / r.PeakGFLOPs
		computed := acct.usefulFLOPs - float64(reused)*info.Config.FLOPsPerToken()
		if r.SharedPrefix { // its graph prunes the last layer
			computed -= float64(acct.useful-int(reused)-r.Pairs) * info.Config.LastLayerSkipFLOPs()
		}
		r.ComputedGFLOPs = computed / oursTime.Seconds() / 1e9
		r.EfficiencyComputed = r.ComputedGFLOPs / r.PeakGFLOPs
		effs := make([][]float64, len(meters))
		var baseEffs []float64
		for i, a := range acct.perReq {
			c := a.usefulFLOPs - float64(reqReused[i])*info.Config.FLOPsPerToken()
			if r.SharedPrefix {
				c -= float64(a.useful-int(reqReused[i])-a.pairs) * info.Config.LastLayerSkipFLOPs()
			}
			gflops := c / perReq[&oursTime][i].Seconds() / 1e9
			for m := range meters {
				effs[m] = append(effs[m], gflops/reqPeaks[m][i])
			}
			baseEffs = append(baseEffs, a.baselineFLOPs/perReq[&baseTime][i].Seconds()/1e9/reqPeaks[0][i])
		}
		r.EffComputedMedian = median(effs[0])
		if q == onnx.QuantNone {
			r.BaselineEfficiency = median(baseEffs)
			r.SpeedupBoundComputed = acct.baselineFLOPs / computed
			r.SpeedupCeiling = r.SpeedupBoundComputed / r.BaselineEfficiency
		}
		if len(meters) > 1 {
			r.QuantEffComputedMedian = median(effs[1])
		}
		if r.QuantPeakGFLOPs > 0 {
			r.QuantEfficiency = r.UsefulGFLOPs / r.QuantPeakGFLOPs
			r.QuantEffComputed = r.ComputedGFLOPs / r.QuantPeakGFLOPs
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	_, err = fmt.Fprintf(stdout, "%s weights: pairs/s %.2f (baseline %.2f, uncached %.2f; speedup %.2fx, %.2fx vs uncached); "+
		"useful %.1f GFLOP/s of peak %.1f (efficiency %.2f, %.2f counting only what ran); %.0f tokens/pair, prefix %.0f (%.0f from the cache); "+
		"vs float32: |dlogit| max %.3g mean %.3g, |dscore| max %.2g mean %.2g, Kendall tau %.3f, top-5 same %.2f; "+
		"peak RSS %.0f MB (%.0f MB with model.onnx open too; weight files %.0f MB)\n",
		r.Quant, r.PairsPerS, r.BaselinePairsPerS, r.UncachedPairsPerS, r.Speedup, r.SpeedupVsUncached, r.UsefulGFLOPs, r.PeakGFLOPs,
		r.Efficiency, r.EfficiencyComputed, r.MeanTokensPerPair, r.MeanPrefixTokens, r.MeanPrefixReused,
		r.MaxAbsLogitError, r.MeanAbsLogitError, r.MaxAbsScoreError, r.MeanAbsScoreError, r.KendallTau, r.Top5Agree, r.PeakRSSMB, r.PeakRSSAllMB, r.WeightFilesMB)
	if err == nil && r.ServedPairsPerS > 0 {
		_, err = fmt.Fprintf(stdout, "served (HTTP + scheduler, one client): pairs/s %.2f, ratio to direct %.3f (median per request %.3f); engine calls per request %.0f (direct %.0f); max logit difference %.2g\n",
			r.ServedPairsPerS, r.ServedRatio, r.ServedRatioMedian, r.EngineCallsPerRequest, r.DirectEngineCallsPerRequest, r.ServedMaxAbsLogitDiff)
	}
	if err == nil && r.ReadyS > 0 {
		_, err = fmt.Fprintf(stdout, "start to ready: median %.2f s of %v, peak RSS at ready %.0f MB; with --session-cache %.2f s of %v, %.0f MB\n",
			r.ReadyS, r.ReadyStartsS, r.ReadyPeakRSSMB, r.ReadyCachedS, r.ReadyCachedStartsS, r.ReadyCachedPeakRSSMB)
	}
	if err == nil && r.Profile != nil {
		err = printProfile(stdout, r.Profile)
	}
	if err == nil && r.SpeedupCeiling > 0 {
		_, err = fmt.Fprintf(stdout, "ceiling: the baseline computes %.2fx our FLOPs at efficiency %.2f, so every FLOP of ours at the peak would give %.2fx\n",
			r.SpeedupBoundComputed, r.BaselineEfficiency, r.SpeedupCeiling)
	}
	return err
}

// peakRows is the MatMul chain's row count: about one packed batch of a
// 20-candidate request (~1,100 tokens) would be fairer still, but 256 rows
// already run at the kernel's full rate and keep the measurement short.
const peakRows = 256

// benchTokens is the workload's token accounting.
type benchTokens struct {
	realTokens   int     // every pair's prompt, summed
	prefixTokens int     // each request's shared prefix, summed over requests
	useful       int     // tokens that must be computed: prefix once per request, continuation per pair
	usefulFLOPs  float64 // their matrix and attention FLOPs (0 without config.json)
	plain        int     // tokens the uncached batches compute (padding included)
	perReq       []benchReq
	shared       int // tokens the shared-prefix engine computes for the same batches
	// baselineFLOPs: matrix and attention FLOPs of every pair's whole
	// prompt, what one call per pair computes (0 without config.json).
	baselineFLOPs float64
}

// benchReq is one request's share of benchTokens.
type benchReq struct {
	useful, pairs              int
	usefulFLOPs, baselineFLOPs float64
}

// benchAccounting replays the scorer's batching of reqs to count tokens.
func benchAccounting(s *rerank.Scorer, reqs []rerank.Request, info model.Info) (benchTokens, error) {
	var a benchTokens
	for _, r := range reqs {
		prompts, err := s.Prompts(r)
		if err != nil {
			return a, err
		}
		seqs := make([][]int, len(prompts))
		shortest := math.MaxInt
		for i, p := range prompts {
			seqs[i] = p.IDs
			a.realTokens += len(p.IDs)
			shortest = min(shortest, len(p.IDs))
		}
		prefix := shortest - 1
		for _, q := range seqs[1:] {
			n := 0
			for n < prefix && q[n] == seqs[0][n] {
				n++
			}
			prefix = n
		}
		a.prefixTokens += prefix
		useful0, flops0, base0 := a.useful, a.usefulFLOPs, a.baselineFLOPs
		a.useful += prefix
		if c := info.Config; c != nil {
			a.usefulFLOPs += c.FLOPsPerToken()*float64(prefix) + c.AttentionFLOPs(prefix)
		}
		for _, q := range seqs {
			a.useful += len(q) - prefix
			if c := info.Config; c != nil {
				a.usefulFLOPs += c.FLOPsPerToken()*float64(len(q)-prefix) + c.AttentionFLOPs(len(q)) - c.AttentionFLOPs(prefix)
				a.baselineFLOPs += c.FLOPsPerToken()*float64(len(q)) + c.AttentionFLOPs(len(q))
			}
		}
		a.perReq = append(a.perReq, benchReq{useful: a.useful - useful0, pairs: len(seqs),
			usefulFLOPs: a.usefulFLOPs - flops0, baselineFLOPs: a.baselineFLOPs - base0})
		for _, batch := range s.Batches(prompts) {
			b := make([][]int, len(batch))
			for k, i := range batch {
				b[k] = seqs[i]
			}
			plain, shared := model.BatchTokens(b)
			a.plain += plain
			a.shared += shared
		}
	}
	return a, nil
}

// benchMeters loads the float32 MatMul-chain meter, and q's when q is
// quantised, with our path's session settings.
func benchMeters(cfg model.SessionConfig, q onnx.Quant, hidden int) ([]*peakMeter, error) {
	kinds := []onnx.Quant{onnx.QuantNone}
	if q != onnx.QuantNone {
		kinds = append(kinds, q)
	}
	var meters []*peakMeter
	for _, k := range kinds {
		m, err := newPeakMeter(cfg, k, 16, hidden, peakRows)
		if err != nil {
			for _, m := range meters {
				_ = m.Close()
			}
			return nil, err
		}
		meters = append(meters, m)
	}
	return meters, nil
}

// median is the middle of xs (the mean of the middle two; 0 when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// medianRatio is the median of num[i]/den[i] (0 when empty).
func medianRatio(num, den []time.Duration) float64 {
	n := min(len(num), len(den))
	if n == 0 {
		return 0
	}
	r := make([]float64, n)
	for i := range r {
		r[i] = num[i].Seconds() / den[i].Seconds()
	}
	return median(r)
}

// prefixCacheStats reads the scorer's prefix cache counters (zero without
// one).
func prefixCacheStats(s *rerank.Scorer) rerank.PrefixCacheStats {
	if ps, ok := s.Engine().(*model.PrefixSession); ok {
		st, _ := ps.CacheStats()
		return st
	}
	return rerank.PrefixCacheStats{}
}

// peakRSSMB is the process's peak resident set (VmHWM), or 0 where
// /proc/self/status is unavailable.
func peakRSSMB() float64 { return statusPeakMB("self") }

// statusPeakMB is the VmHWM of process pid ("self" or a number) in MiB, or
// 0 where /proc has none.
func statusPeakMB(pid string) float64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// fileBytes sums the sizes of dir's named files that exist.
func fileBytes(dir string, names ...string) int64 {
	var n int64
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func timeRequests(ctx context.Context, s *rerank.Scorer, reqs []rerank.Request) ([]rerank.Score, time.Duration, error) {
	var all []rerank.Score
	start := time.Now()
	for _, r := range reqs {
		out, err := s.Score(ctx, r)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, out...)
	}
	if len(all) == 0 {
		return nil, 0, errors.New("no pairs scored")
	}
	return all, time.Since(start), nil
}

// benchWorkload makes dialog-memory-like requests: invented speakers and
// events, lengths drawn like LoCoMo turns.
func benchWorkload(requests, candidates int, seed uint64) []rerank.Request {
	rng := rand.New(rand.NewPCG(seed, 0xbe7c4))
	names := []string{"Caroline", "Melanie", "Jon", "Gina", "Priya", "Tomasz"}
	words := strings.Fields("went to the support group yesterday and felt really empowered after talking with everyone there " +
		"we painted a sunset over the lake last weekend while the kids played camping trip in July was amazing " +
		"my therapist said it would help I started volunteering at the food bank adopted a rescue cat named Luna " +
		"planning to apply for counseling certification next month because helping people matters to me")
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	out := make([]rerank.Request, requests)
	for i := range out {
		docs := make([]string, candidates)
		for j := range docs {
			docs[j] = names[rng.IntN(len(names))] + ": " + text(15+rng.IntN(50)) + "."
		}
		out[i] = rerank.Request{Query: "When did " + names[rng.IntN(len(names))] + " " + text(8) + "?", Docs: docs}
	}
	return out
}

// rankAgreement compares two scorings of the same requests (consecutive
// groups of n pairs): the mean Kendall tau-a of the two orders and the
// share of groups whose 5 best pairs are the same set.
func rankAgreement(a, b []rerank.Score, n int) (tau, top5 float64) {
	groups := len(a) / n
	if groups == 0 {
		return 0, 0
	}
	for g := range groups {
		x, y := a[g*n:(g+1)*n], b[g*n:(g+1)*n]
		if n < 2 {
			tau++
		} else {
			var conc float64
			for i := range n {
				for j := i + 1; j < n; j++ {
					conc += sign(x[i].Score-x[j].Score) * sign(y[i].Score-y[j].Score)
				}
			}
			tau += conc / float64(n*(n-1)/2)
		}
		if sameTop(x, y, 5) {
			top5++
		}
	}
	return tau / float64(groups), top5 / float64(groups)
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// sameTop reports whether the k best-scored positions of x and y agree as
// sets (ties broken by position).
func sameTop(x, y []rerank.Score, k int) bool {
	top := func(s []rerank.Score) map[int]bool {
		idx := make([]int, len(s))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(s[j].Score, s[i].Score) })
		m := map[int]bool{}
		for _, i := range idx[:min(k, len(idx))] {
			m[i] = true
		}
		return m
	}
	tx, ty := top(x), top(y)
	for i := range tx {
		if !ty[i] {
			return false
		}
	}
	return true
}
