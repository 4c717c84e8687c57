package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// servedMemory is one variant's memory as a server holds it: a fresh
// `rerankd serve` process for the variant, its peak resident set (VmHWM)
// when /ready first answers 200 and again after Requests requests of the
// bench's workload, against the weight bytes the variant's graph uses
// (its initializers, inline or in the data file the variants share).
// With a baseline binary (bench --baseline-bin), a server of that build
// runs beside ours and the two take turns request by request, so the
// memory and the pairs/s ratio compare the builds in the same run.
type servedMemory struct {
	Quant         string  `json:"quant"`
	Requests      int     `json:"requests"`
	WeightMB      float64 `json:"weight_mb"`
	ReadyPeakMB   float64 `json:"ready_peak_rss_mb"`
	AfterPeakMB   float64 `json:"peak_rss_after_requests_mb"`
	OverWeightsMB float64 `json:"peak_over_weights_mb"`
	PairsPerS     float64 `json:"pairs_per_s"`
	// Stages is where the server's resident memory is at ready, after
	// the first request and after all of them (procMemory).
	Stages []procMemory `json:"stages,omitempty"`
	// Baseline is the same measurement of the baseline build's server
	// (its own folder with --baseline-model); OursOverBaseline is our
	// pairs/s over its, and the median of the per-request ratios.
	Baseline               *servedMemory `json:"baseline,omitempty"`
	OursOverBaseline       float64       `json:"ours_over_baseline,omitempty"`
	OursOverBaselineMedian float64       `json:"ours_over_baseline_median,omitempty"`
	// MaxAbsLogitDiff is the largest difference between the two builds'
	// logits for the same pairs.
	MaxAbsLogitDiff *float64 `json:"max_abs_logit_diff_vs_baseline,omitempty"`
	// Binary and Model say what the baseline ran; ServeFlags what bench
	// --serve-flag added to our server.
	Binary     string   `json:"binary,omitempty"`
	Model      string   `json:"model,omitempty"`
	ServeFlags []string `json:"serve_flags,omitempty"`
}

// memoryBench is what measureServedMemory needs from bench's flags.
type memoryBench struct {
	settings      servedSettings
	requests      []rerank.Request
	baselineBin   string   // "" none
	baselineModel string   // the baseline's folder ("" the same)
	serveFlags    []string // added to our server's arguments only
}

// serveFlagList is bench's repeatable --serve-flag.
type serveFlagList []string

func (l *serveFlagList) String() string { return strings.Join(*l, " ") }

// Set takes one serve flag, which must be written --name or --name=value
// so that it cannot swallow the next argument.
func (l *serveFlagList) Set(v string) error {
	if !strings.HasPrefix(v, "-") {
		return fmt.Errorf("%q: want --name or --name=value", v)
	}
	*l = append(*l, v)
	return nil
}

// folderVariants lists the variants a model folder has a graph for:
// float32 first, then the quantised ones in onnx.Quants order.
func folderVariants(dir string) []onnx.Quant {
	out := []onnx.Quant{onnx.QuantNone}
	for _, q := range onnx.Quants() {
		if _, err := os.Stat(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, q))); err == nil {
			out = append(out, q)
		}
	}
	return out
}

// measureServedMemory measures every variant of the folder in a server
// of its own (servedMemory), one after the other.
func measureServedMemory(ctx context.Context, mb memoryBench, stderr io.Writer) ([]servedMemory, error) {
	exe, err := rerankdExe()
	if err != nil {
		return nil, fmt.Errorf("served memory: %w", err)
	}
	var out []servedMemory
	for _, q := range folderVariants(mb.settings.dir) {
		st := mb.settings
		st.quant = q
		fmt.Fprintf(stderr, "served memory, %s: a fresh rerankd serve, %d requests...\n", q, len(mb.requests))
		m, err := memoryOfVariant(ctx, exe, st, mb)
		if err != nil {
			return nil, fmt.Errorf("served memory, %s: %w", q, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// memoryOfVariant starts our server for st (and the baseline's beside it)
// and sends the requests, alternating between the two.
func memoryOfVariant(ctx context.Context, exe string, st servedSettings, mb memoryBench) (servedMemory, error) {
	m := servedMemory{Quant: st.quant.String(), Requests: len(mb.requests), ServeFlags: mb.serveFlags}
	w, err := variantWeightBytes(st.dir, st.quant)
	if err != nil {
		return m, err
	}
	m.WeightMB = float64(w) / (1 << 20)
	err = timeServeStart(ctx, exe, append(st.args(), mb.serveFlags...), func(pid int, url string, _ float64) error {
		m.Stages = append(m.Stages, readProcMemory(pid, "ready", st.dir))
		m.ReadyPeakMB = m.Stages[0].PeakMB
		ours, err := memoryClient(url)
		if err != nil {
			return err
		}
		if mb.baselineBin == "" {
			var oursT []time.Duration
			for i, r := range mb.requests {
				_, d, err := rerankOnce(ctx, ours, r)
				if err != nil {
					return err
				}
				oursT = append(oursT, d)
				if i == 0 {
					m.Stages = append(m.Stages, readProcMemory(pid, "after 1 request", st.dir))
				}
			}
			m.Stages = append(m.Stages, readProcMemory(pid, fmt.Sprintf("after %d requests", len(mb.requests)), st.dir))
			m.AfterPeakMB = m.Stages[len(m.Stages)-1].PeakMB
			m.PairsPerS = pairsPerS(mb.requests, oursT)
			return nil
		}
		bst := st
		if mb.baselineModel != "" {
			bst.dir = mb.baselineModel
		}
		b := servedMemory{Quant: m.Quant, Requests: m.Requests, Binary: mb.baselineBin, Model: bst.dir}
		if w, err := variantWeightBytes(bst.dir, bst.quant); err == nil {
			b.WeightMB = float64(w) / (1 << 20)
		}
		return timeServeStart(ctx, mb.baselineBin, bst.args(), func(bpid int, burl string, _ float64) error {
			b.Stages = append(b.Stages, readProcMemory(bpid, "ready", bst.dir))
			b.ReadyPeakMB = b.Stages[0].PeakMB
			base, err := memoryClient(burl)
			if err != nil {
				return err
			}
			var oursT, baseT []time.Duration
			diff := 0.0
			for i, r := range mb.requests {
				// Which build goes first alternates, so drift in the
				// host's load hits both alike.
				var got, want []rerank.Score
				var d, bd time.Duration
				if i%2 == 0 {
					if got, d, err = rerankOnce(ctx, ours, r); err == nil {
						want, bd, err = rerankOnce(ctx, base, r)
					}
				} else {
					if want, bd, err = rerankOnce(ctx, base, r); err == nil {
						got, d, err = rerankOnce(ctx, ours, r)
					}
				}
				if err != nil {
					return err
				}
				oursT, baseT = append(oursT, d), append(baseT, bd)
				for j := range got {
					diff = math.Max(diff, math.Abs(got[j].Logit-want[j].Logit))
				}
				if i == 0 {
					m.Stages = append(m.Stages, readProcMemory(pid, "after 1 request", st.dir))
					b.Stages = append(b.Stages, readProcMemory(bpid, "after 1 request", bst.dir))
				}
			}
			after := fmt.Sprintf("after %d requests", len(mb.requests))
			m.Stages = append(m.Stages, readProcMemory(pid, after, st.dir))
			b.Stages = append(b.Stages, readProcMemory(bpid, after, bst.dir))
			m.AfterPeakMB = m.Stages[len(m.Stages)-1].PeakMB
			b.AfterPeakMB = b.Stages[len(b.Stages)-1].PeakMB
			m.PairsPerS, b.PairsPerS = pairsPerS(mb.requests, oursT), pairsPerS(mb.requests, baseT)
			b.OverWeightsMB = b.AfterPeakMB - b.WeightMB
			m.Baseline, m.OursOverBaseline, m.OursOverBaselineMedian = &b, m.PairsPerS/b.PairsPerS, medianRatio(baseT, oursT)
			m.MaxAbsLogitDiff = &diff
			return nil
		})
	})
	m.OverWeightsMB = m.AfterPeakMB - m.WeightMB
	return m, err
}

func memoryClient(url string) (*client.Client, error) {
	// No retries: a 429 here is a failure of the measurement, not load.
	return client.New(client.Config{BaseURL: url, MaxRetries: -1})
}

// rerankOnce sends r as one /rerank call with raw scores and returns the
// scores in document order and the round trip's time.
func rerankOnce(ctx context.Context, c *client.Client, r rerank.Request) ([]rerank.Score, time.Duration, error) {
	docs := make([]api.Document, len(r.Docs))
	for i, d := range r.Docs {
		docs[i] = api.Document{Text: d}
	}
	t0 := time.Now()
	resp, err := c.Rerank(ctx, api.RerankRequest{Query: r.Query, Instruction: r.Instruction, Context: r.Context, Documents: docs, RawScores: true})
	d := time.Since(t0)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Results) != len(r.Docs) {
		return nil, 0, fmt.Errorf("%d results for %d documents", len(resp.Results), len(r.Docs))
	}
	out := make([]rerank.Score, len(r.Docs))
	for _, res := range resp.Results {
		out[res.Index] = rerank.Score{Logit: res.RelevanceScore, Score: rerank.Sigmoid(res.RelevanceScore)}
	}
	return out, d, nil
}

func pairsPerS(reqs []rerank.Request, ts []time.Duration) float64 {
	n := 0
	for _, r := range reqs {
		n += len(r.Docs)
	}
	return float64(n) / sum(ts).Seconds()
}

// printServedMemory prints one line per variant.
func printServedMemory(w io.Writer, ms []servedMemory) error {
	for _, m := range ms {
		if _, err := fmt.Fprintf(w, "served %s: peak RSS %.0f MB at ready, %.0f MB after %d requests (weights the graph uses %.0f MB, %+.0f MB); pairs/s %.2f\n",
			m.Quant, m.ReadyPeakMB, m.AfterPeakMB, m.Requests, m.WeightMB, m.OverWeightsMB, m.PairsPerS); err != nil {
			return err
		}
		for _, st := range m.Stages {
			if _, err := fmt.Fprintf(w, "  %s\n", st); err != nil {
				return err
			}
		}
		if b := m.Baseline; b != nil {
			if _, err := fmt.Fprintf(w, "  baseline %s on %s: peak RSS %.0f MB at ready, %.0f MB after (weights %.0f MB, %+.0f MB); pairs/s %.2f: ours over it %.3f (median per request %.3f), max logit difference %.2g\n",
				b.Binary, b.Model, b.ReadyPeakMB, b.AfterPeakMB, b.WeightMB, b.OverWeightsMB, b.PairsPerS, m.OursOverBaseline, m.OursOverBaselineMedian, *m.MaxAbsLogitDiff); err != nil {
				return err
			}
			for _, st := range b.Stages {
				if _, err := fmt.Fprintf(w, "    %s\n", st); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
