package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// encoderBench is bench's settings for a cross-encoder folder (BERT,
// XLM-R), from the flags runBench parsed.
type encoderBench struct {
	dir                          string
	requests, candidates, starts int
	quant                        onnx.Quant
	seed                         uint64
	served, asJSON               bool
	opts                         model.Options
	settings                     servedSettings
	profile                      string        // --ort-profile prefix of our path's trace ("" off)
	compare                      string        // --compare folder ("" none)
	memRequests                  int           // --memory-requests (0: no served memory)
	baselineBin, baselineModel   string        // --baseline-bin, --baseline-model
	serveFlags                   []string      // --serve-flag: added to our server's arguments
	peakTime                     time.Duration // --peak-time: the final peak measurement; each request's takes a fifth
}

// encoderBenchResult is bench's --json output for a cross-encoder. A
// cross-encoder has no shared prefix (attention is bidirectional), so our
// path is the scorer's batching: pairs sorted by length and packed into
// padded batches within the token budget. The baseline is one ONNX
// Runtime call per pair on the float32 graph; the reference for score
// errors is the float32 graph batched the same way.
type encoderBenchResult struct {
	Family        string  `json:"family"`
	Params        int64   `json:"params"`
	Layers        int     `json:"layers"`
	Hidden        int     `json:"hidden"`
	Quant         string  `json:"quant"`
	Requests      int     `json:"requests"`
	Candidates    int     `json:"candidates"`
	Pairs         int     `json:"pairs"`
	MaxLength     int     `json:"max_length"`
	TokensPerPair float64 `json:"mean_tokens_per_pair"`
	// PaddingRatio is the batches' padding over their real tokens.
	PaddingRatio float64 `json:"padding_ratio"`
	// EngineCalls is the median of engine calls per request (our path).
	EngineCalls       float64 `json:"engine_calls_per_request"`
	PairsPerS         float64 `json:"pairs_per_s"`
	BaselinePairsPerS float64 `json:"baseline_pairs_per_s"`
	Speedup           float64 `json:"speedup"`
	SpeedupMedian     float64 `json:"speedup_median"`
	// ServedRatio is the served composition's pairs/s over ours (HTTP,
	// scheduler and engine, one client).
	ServedPairsPerS       float64 `json:"served_pairs_per_s,omitempty"`
	ServedRatio           float64 `json:"served_ratio,omitempty"`
	ServedRatioMedian     float64 `json:"served_ratio_median,omitempty"`
	ServedEngineCalls     float64 `json:"served_engine_calls_per_request,omitempty"`
	ServedMaxAbsLogitDiff float64 `json:"served_max_abs_logit_diff,omitempty"`
	// UsefulGFLOPs counts the real tokens' matrix and attention work
	// (padding excluded); Efficiency is it over the same-run peak of a
	// float32 MatMul chain of the model's width.
	UsefulGFLOPs     float64 `json:"useful_gflops"`
	PeakGFLOPs       float64 `json:"peak_gflops"`
	Efficiency       float64 `json:"efficiency"`
	EfficiencyMedian float64 `json:"efficiency_median"`
	BaselineEff      float64 `json:"baseline_efficiency_median"`
	// QuantPeakGFLOPs is the same chain's peak in the quantised variant's
	// arithmetic, and QuantEfficiency ours over it (only with --quant).
	QuantPeakGFLOPs float64 `json:"quant_peak_gflops,omitempty"`
	QuantEfficiency float64 `json:"quant_efficiency,omitempty"`
	// The quantised graph's error against the float32 reference (only
	// with --quant other than fp32).
	Error *quantError `json:"quant_error,omitempty"`
	// PeakRSSMB is this process's VmHWM after our path alone scored one
	// request: the model, its tokenizer and one request's activations.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// WeightFilesMB is the weight data our graph uses (its initializers,
	// inline or in the data file the variants share).
	WeightFilesMB float64   `json:"weight_files_mb"`
	RSSOverMB     float64   `json:"rss_over_weights_mb"`
	ReadyS        float64   `json:"ready_s,omitempty"`
	ReadyStartsS  []float64 `json:"ready_starts_s,omitempty"`
	ReadyPeakMB   float64   `json:"ready_peak_rss_mb,omitempty"`
	// ServedMemory is each variant's peak resident memory in a server of
	// its own, at ready and after --memory-requests requests.
	ServedMemory []servedMemory `json:"served_memory,omitempty"`
	// Profile is our path's ONNX Runtime trace (--ort-profile): the op
	// types that ran show which of ONNX Runtime's fusions (Attention,
	// SkipLayerNormalization, Gelu) it applied to the graph.
	Profile *profileResult `json:"ort_profile,omitempty"`
	// Compare is --compare's folder, timed beside ours in every request.
	Compare *compareResult `json:"compare,omitempty"`
	Notes   string         `json:"notes"`
}

// compareResult is a second folder's batched path against ours, the two
// taking turns request by request (which goes first alternates, so the
// host's drift hits both alike).
type compareResult struct {
	Dir string `json:"dir"`
	// EncoderFusion is the folder's graph form (onnx.MetaEncoderFusion),
	// as is OursFusion ours.
	EncoderFusion string  `json:"encoder_fusion"`
	OursFusion    string  `json:"ours_encoder_fusion"`
	PairsPerS     float64 `json:"pairs_per_s"`
	// Ratio is ours over it in pairs/s (above 1: ours is faster);
	// RatioMedian the median of the per-request ratios.
	Ratio       float64 `json:"ours_over_it"`
	RatioMedian float64 `json:"ours_over_it_median"`
	// MaxAbsLogitDiff is the largest difference from our logits.
	MaxAbsLogitDiff float64 `json:"max_abs_logit_diff"`
}

// quantError is a quantised graph's score error against float32 over the
// bench's requests.
type quantError struct {
	MaxAbsLogit  float64 `json:"max_abs_logit"`
	MeanAbsLogit float64 `json:"mean_abs_logit"`
	MaxAbsScore  float64 `json:"max_abs_score"`
	MeanAbsScore float64 `json:"mean_abs_score"`
	KendallTau   float64 `json:"kendall_tau"`
	Top5Agree    float64 `json:"top5_agree"`
	// RefLogitStd is the spread of the float32 logits the errors are
	// judged against: random weights give close logits, so small errors
	// reorder them more than a trained model's would.
	RefLogitStd float64 `json:"ref_logit_std"`
}

// runEncoderBench measures a cross-encoder folder: ours, the one-pair
// baseline, the float32 reference (when ours is quantised) and the served
// composition take turns request by request.
func runEncoderBench(b encoderBench, stdout, stderr io.Writer) error {
	ctx := context.Background()
	benchStart := time.Now() // a trace written after this is ours
	reqs := benchWorkload(b.requests+1, b.candidates, b.seed)
	warm := reqs[b.requests]
	reqs = reqs[:b.requests]

	s, info, err := model.Open(b.dir, b.opts)
	if err != nil {
		return err
	}
	defer s.Close() //nolint:errcheck // measurements are already printed
	if info.Encoder == nil {
		return fmt.Errorf("bench: %s: not a cross-encoder folder (no encoder config.json)", b.dir)
	}
	cfg := *info.Encoder
	if _, err := s.Score(ctx, warm); err != nil {
		return err
	}
	r := encoderBenchResult{Family: cfg.Family(), Params: cfg.Params(), Layers: cfg.NumHiddenLayers, Hidden: cfg.HiddenSize,
		Quant: b.quant.String(), Requests: b.requests, Candidates: b.candidates, MaxLength: info.MaxLength,
		PeakRSSMB: peakRSSMB(),
		Notes:     "speed only: scores of a random-weight model carry no meaning; same-run ratios are what to compare across machines"}
	weights, err := variantWeightBytes(b.dir, b.quant)
	if err != nil {
		return err
	}
	r.WeightFilesMB = float64(weights) / 1e6
	r.RSSOverMB = r.PeakRSSMB - r.WeightFilesMB
	if b.starts > 0 {
		fmt.Fprintf(stderr, "timing %d starts of rerankd serve to /ready...\n", b.starts)
		starts, err := measureReady(ctx, b.settings, b.starts)
		if err != nil {
			return err
		}
		for _, st := range starts {
			r.ReadyStartsS = append(r.ReadyStartsS, st.Seconds)
			r.ReadyPeakMB = max(r.ReadyPeakMB, st.PeakMB)
		}
		r.ReadyS = median(r.ReadyStartsS)
	}
	if b.memRequests > 0 {
		mb := memoryBench{settings: b.settings, requests: benchWorkload(b.memRequests, b.candidates, b.seed+1),
			baselineBin: b.baselineBin, baselineModel: b.baselineModel, serveFlags: b.serveFlags}
		if r.ServedMemory, err = measureServedMemory(ctx, mb, stderr); err != nil {
			return err
		}
	}

	ref := s // the float32 reference: ours when ours is float32, unless ours is traced
	if b.quant != onnx.QuantNone || b.profile != "" {
		o := b.opts
		o.Quant, o.Session.ProfilePrefix = onnx.QuantNone, ""
		if ref, _, err = model.Open(b.dir, o); err != nil {
			return err
		}
		defer ref.Close() //nolint:errcheck // measurements are already printed
	}
	var alt *rerank.Scorer
	if b.compare != "" {
		o := b.opts
		o.Session.ProfilePrefix = ""
		if alt, _, err = model.Open(b.compare, o); err != nil {
			return fmt.Errorf("bench: --compare: %w", err)
		}
		defer alt.Close() //nolint:errcheck // measurements are already printed
		if _, err := alt.Score(ctx, warm); err != nil {
			return fmt.Errorf("bench: --compare: %w", err)
		}
	}
	one := b.opts.Scorer
	// As Open set it for this model: the pair cut at its positions.
	one.Prompt.MaxLength, one.BatchTokens = info.MaxLength, max(one.BatchTokens, info.MaxLength)
	one.MaxBatch = 1
	base, err := ref.WithConfig(one)
	if err != nil {
		return err
	}
	var srv *servedPath
	if b.served {
		if srv, err = startServed(b.settings, stderr); err != nil {
			return err
		}
		defer srv.stop()
		if _, _, _, err := srv.score(ctx, warm); err != nil {
			return err
		}
	}
	meterSess := b.opts.Session
	meterSess.ProfilePrefix = ""
	meters, err := benchMeters(meterSess, b.quant, cfg.HiddenSize)
	if err != nil {
		return err
	}
	defer func() {
		for _, m := range meters {
			_ = m.Close()
		}
	}()

	var ours, refScores, servedScores []rerank.Score
	var oursT, baseT, servedT []time.Duration
	var calls, servedCalls []int
	var real, padded int
	var usefulFLOPs float64
	var effs, baseEffs, peaks []float64
	var altScores []rerank.Score
	var altT []time.Duration
	timeAlt := func(req rerank.Request) error {
		got, d, err := timeRequests(ctx, alt, []rerank.Request{req})
		altScores, altT = append(altScores, got...), append(altT, d)
		return err
	}
	fmt.Fprintf(stderr, "scoring %d requests x %d memories: ours (%s, batched), one pair per call, served, in turn...\n", b.requests, b.candidates, b.quant)
	bar := progress.New(stderr, int64(len(reqs)), "bench", progress.Items)
	for i, req := range reqs {
		if i > 0 {
			bar.Add(1)
		}
		prompts, err := s.Prompts(req)
		if err != nil {
			return err
		}
		flops := 0.0
		for _, p := range prompts {
			real += len(p.IDs)
			flops += encoderFLOPs(cfg, len(p.IDs))
		}
		for _, batch := range s.Batches(prompts) {
			longest := 0
			for _, j := range batch {
				longest = max(longest, len(prompts[j].IDs))
			}
			padded += longest * len(batch)
		}
		calls = append(calls, len(s.Batches(prompts)))
		usefulFLOPs += flops

		if alt != nil && i%2 == 1 {
			if err := timeAlt(req); err != nil {
				return err
			}
		}
		got, d, err := timeRequests(ctx, s, []rerank.Request{req})
		if err != nil {
			return err
		}
		ours, oursT = append(ours, got...), append(oursT, d)
		if alt != nil && i%2 == 0 {
			if err := timeAlt(req); err != nil {
				return err
			}
		}
		_, bd, err := timeRequests(ctx, base, []rerank.Request{req})
		if err != nil {
			return err
		}
		baseT = append(baseT, bd)
		if ref != s {
			got, _, err := timeRequests(ctx, ref, []rerank.Request{req})
			if err != nil {
				return err
			}
			refScores = append(refScores, got...)
		}
		if srv != nil {
			got, d, n, err := srv.score(ctx, req)
			if err != nil {
				return err
			}
			servedScores, servedT, servedCalls = append(servedScores, got...), append(servedT, d), append(servedCalls, n)
		}
		peak, err := meters[0].Measure(b.peakTime / 5)
		if err != nil {
			return err
		}
		peaks = append(peaks, peak)
		effs = append(effs, flops/d.Seconds()/1e9/peak)
		baseEffs = append(baseEffs, flops/bd.Seconds()/1e9/peak)
	}
	bar.Finish()
	if b.profile != "" {
		// ONNX Runtime writes the trace when the session closes; our path
		// is done.
		if err := s.Close(); err != nil {
			return err
		}
		if r.Profile, err = readProfile(b.profile, benchStart, median(peaks)); err != nil {
			return err
		}
	}
	fmt.Fprintln(stderr, "measuring the MatMul-chain peak...")
	if r.PeakGFLOPs, err = meters[0].Measure(b.peakTime); err != nil {
		return err
	}
	if len(meters) > 1 {
		if r.QuantPeakGFLOPs, err = meters[1].Measure(b.peakTime); err != nil {
			return err
		}
	}

	r.Pairs = len(ours)
	r.TokensPerPair = float64(real) / float64(r.Pairs)
	r.PaddingRatio = float64(padded-real) / float64(real)
	r.EngineCalls = medianInt(calls)
	r.PairsPerS = float64(r.Pairs) / sum(oursT).Seconds()
	r.BaselinePairsPerS = float64(r.Pairs) / sum(baseT).Seconds()
	r.Speedup = r.PairsPerS / r.BaselinePairsPerS
	r.SpeedupMedian = medianRatio(baseT, oursT)
	r.UsefulGFLOPs = usefulFLOPs / sum(oursT).Seconds() / 1e9
	r.Efficiency = r.UsefulGFLOPs / r.PeakGFLOPs
	if r.QuantPeakGFLOPs > 0 {
		r.QuantEfficiency = r.UsefulGFLOPs / r.QuantPeakGFLOPs
	}
	r.EfficiencyMedian, r.BaselineEff = median(effs), median(baseEffs)
	if srv != nil {
		r.ServedPairsPerS = float64(r.Pairs) / sum(servedT).Seconds()
		r.ServedRatio = r.ServedPairsPerS / r.PairsPerS
		r.ServedRatioMedian = medianRatio(oursT, servedT)
		r.ServedEngineCalls = medianInt(servedCalls)
		for i, sc := range servedScores {
			r.ServedMaxAbsLogitDiff = math.Max(r.ServedMaxAbsLogitDiff, math.Abs(sc.Logit-ours[i].Logit))
		}
	}
	if refScores != nil && b.quant != onnx.QuantNone {
		r.Error = compareScores(ours, refScores, b.candidates)
	}
	if alt != nil {
		c := &compareResult{Dir: b.compare, PairsPerS: float64(len(altScores)) / sum(altT).Seconds(), RatioMedian: medianRatio(altT, oursT)}
		c.Ratio = r.PairsPerS / c.PairsPerS
		for i, sc := range altScores {
			c.MaxAbsLogitDiff = math.Max(c.MaxAbsLogitDiff, math.Abs(sc.Logit-ours[i].Logit))
		}
		if c.OursFusion, err = graphFusion(b.dir, b.quant); err == nil {
			c.EncoderFusion, err = graphFusion(b.compare, b.quant)
		}
		if err != nil {
			return err
		}
		r.Compare = c
	}
	if b.asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	return printEncoderBench(stdout, r)
}

// compareScores is got's error against want (consecutive requests of n).
func compareScores(got, want []rerank.Score, n int) *quantError {
	e := &quantError{}
	for i := range got {
		dl, ds := math.Abs(got[i].Logit-want[i].Logit), math.Abs(got[i].Score-want[i].Score)
		e.MaxAbsLogit, e.MaxAbsScore = math.Max(e.MaxAbsLogit, dl), math.Max(e.MaxAbsScore, ds)
		e.MeanAbsLogit += dl / float64(len(got))
		e.MeanAbsScore += ds / float64(len(got))
	}
	e.KendallTau, e.Top5Agree = rankAgreement(got, want, n)
	e.RefLogitStd = logitStd(want)
	return e
}

func printEncoderBench(w io.Writer, r encoderBenchResult) error {
	_, err := fmt.Fprintf(w, "%s %s (%d layers, hidden %d, %.0fM parameters), %s weights: pairs/s %.2f (one pair per call %.2f; speedup %.2fx, median %.2fx); "+
		"%d calls per request, %.0f tokens/pair, padding %.0f%%; useful %.1f GFLOP/s of peak %.1f (efficiency %.2f, median %.2f; baseline %.2f); "+
		"peak RSS %.0f MB (weight files %.0f MB, %+.0f MB)\n",
		r.Family, "cross-encoder", r.Layers, r.Hidden, float64(r.Params)/1e6, r.Quant, r.PairsPerS, r.BaselinePairsPerS, r.Speedup, r.SpeedupMedian,
		int(r.EngineCalls), r.TokensPerPair, 100*r.PaddingRatio, r.UsefulGFLOPs, r.PeakGFLOPs, r.Efficiency, r.EfficiencyMedian, r.BaselineEff,
		r.PeakRSSMB, r.WeightFilesMB, r.RSSOverMB)
	if err == nil && r.ServedPairsPerS > 0 {
		_, err = fmt.Fprintf(w, "served (HTTP + scheduler, one client): pairs/s %.2f, ratio to direct %.3f (median per request %.3f); engine calls per request %.0f; max logit difference %.2g\n",
			r.ServedPairsPerS, r.ServedRatio, r.ServedRatioMedian, r.ServedEngineCalls, r.ServedMaxAbsLogitDiff)
	}
	if err == nil && r.QuantPeakGFLOPs > 0 {
		_, err = fmt.Fprintf(w, "%s peak %.1f GFLOP/s: efficiency %.2f against it\n", r.Quant, r.QuantPeakGFLOPs, r.QuantEfficiency)
	}
	if err == nil && r.Error != nil {
		_, err = fmt.Fprintf(w, "%s vs float32: max |dlogit| %.3g (mean %.3g; float32 logits spread %.3g), max |dscore| %.3g (mean %.3g), Kendall tau %.3f, top-5 agreement %.2f\n",
			r.Quant, r.Error.MaxAbsLogit, r.Error.MeanAbsLogit, r.Error.RefLogitStd, r.Error.MaxAbsScore, r.Error.MeanAbsScore, r.Error.KendallTau, r.Error.Top5Agree)
	}
	if err == nil && r.ReadyS > 0 {
		_, err = fmt.Fprintf(w, "start to ready: median %.2f s of %v, peak RSS at ready %.0f MB\n", r.ReadyS, r.ReadyStartsS, r.ReadyPeakMB)
	}
	if err == nil {
		err = printServedMemory(w, r.ServedMemory)
	}
	if err == nil && r.Compare != nil {
		c := r.Compare
		_, err = fmt.Fprintf(w, "--compare %s (encoder fusion %s; ours %s): pairs/s %.2f, ours over it %.3f (median per request %.3f), max logit difference %.2g\n",
			c.Dir, c.EncoderFusion, c.OursFusion, c.PairsPerS, c.Ratio, c.RatioMedian, c.MaxAbsLogitDiff)
	}
	if err == nil && r.Profile != nil {
		err = printProfile(w, r.Profile)
	}
	return err
}

// graphFusion names the encoder fusion of variant q's graph in dir.
func graphFusion(dir string, q onnx.Quant) (string, error) {
	meta, err := onnx.ReadMeta(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, q)))
	if err != nil {
		return "", err
	}
	if f := meta[onnx.MetaEncoderFusion]; f != "" {
		return f, nil
	}
	return onnx.EncoderFusion(0).String(), nil
}

// encoderFLOPs is the matrix and attention work of one sequence of n
// tokens: every token through every layer, and n·n query-key pairs per
// layer (bidirectional), scores and weighted values.
func encoderFLOPs(c arch.EncoderConfig, n int) float64 {
	attn := 2 * 2 * float64(n) * float64(n) * float64(c.HiddenSize) * float64(c.NumHiddenLayers)
	return c.FLOPsPerToken()*float64(n) + attn
}

// variantWeightBytes is the initializer data the graph of variant q
// uses (variants share one data file; each counts only its own tensors).
func variantWeightBytes(dir string, q onnx.Quant) (int64, error) {
	return onnx.WeightBytes(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, q)))
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}
