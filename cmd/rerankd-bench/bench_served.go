package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/version"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/serve"
)

// servedPath is the served composition (HTTP, scheduler, engine) over the
// bench's model folder, built by app.Build exactly as `rerankd serve`
// builds it, in this process and with its own engine: the two paths must
// not share a prefix cache, or whichever scores a request second would
// find its query cached.
type servedPath struct {
	c       *client.Client
	metrics *serve.Metrics
	stop    func()
}

// servedSettings are the serve flags the bench's own flags decide; the
// rest stay serve's defaults.
type servedSettings struct {
	dir, ortLib, tok string
	quant            onnx.Quant
	threads, cacheMB int
	sessionCache     string // --session-cache ("" off)
	standardAttn     bool   // --attention-form=false
	dev              *device.Flags
}

// benchRequestTimeout is the served path's time limit per request.
const benchRequestTimeout = time.Hour

func (st servedSettings) config() app.Config {
	c := labConfig()
	c.Model.Path, c.Model.Quant, c.Model.Threads, c.Model.PrefixCacheMB, c.Model.RuntimeLib, c.Model.Tokenizer = st.dir, st.quant.String(), st.threads, st.cacheMB, st.ortLib, st.tok
	c.Tuning.AttentionForm = !st.standardAttn
	withDevice(&c, st.dev)
	// A full-size model on two cores takes longer than a served request
	// may: the bench times requests, it does not limit them.
	c.Server.RequestTimeout = benchRequestTimeout
	return c
}

// labConfig is serve's defaults for a server the lab measures: no memory
// store (the lab scores /rerank only) and the lab's version.
func labConfig() app.Config {
	c := app.DefaultConfig()
	c.Memory.Store = "none"
	c.Version = version.String()
	return c
}

// args are the same settings as `rerankd serve` arguments.
func (st servedSettings) args() []string {
	return append([]string{"serve", "--model", st.dir, "--quant", st.quant.String(), "--threads", strconv.Itoa(st.threads),
		"--prefix-cache-mb", strconv.Itoa(st.cacheMB), "--ort-lib", st.ortLib, "--tokenizer", st.tok,
		"--store", "none", "--addr", "127.0.0.1:0", "--log-level", "warn", "--session-cache", st.sessionCache,
		"--request-timeout", benchRequestTimeout.String()}, st.dev.Args()...)
}

func startServed(st servedSettings, stderr io.Writer) (*servedPath, error) {
	cfg := st.config()
	cfg.Notices, cfg.Metrics = stderr, serve.NewMetrics()
	a, err := app.Build(cfg)
	if err != nil {
		return nil, err
	}
	metrics, srv := cfg.Metrics, a.Server
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Shutdown(context.Background())
		return nil, err
	}
	go func() { _ = srv.Serve(ln) }()
	// No retries: a 429 here is a failure of the measurement, not load.
	c, err := client.New(client.Config{BaseURL: "http://" + ln.Addr().String(), MaxRetries: -1})
	if err != nil {
		_ = srv.Shutdown(context.Background())
		return nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return &servedPath{c: c, metrics: metrics, stop: stop}, nil
}

// score sends r as one /rerank call with raw scores and returns the
// scores in document order, the round trip's time and the engine calls
// that carried its pairs (from the server's own metrics).
func (p *servedPath) score(ctx context.Context, r rerank.Request) ([]rerank.Score, time.Duration, int, error) {
	docs := make([]api.Document, len(r.Docs))
	for i, d := range r.Docs {
		docs[i] = api.Document{Text: d}
	}
	callsBefore, _ := p.calls()
	t0 := time.Now()
	resp, err := p.c.Rerank(ctx, api.RerankRequest{Query: r.Query, Instruction: r.Instruction, Context: r.Context, Documents: docs, RawScores: true})
	d := time.Since(t0)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("served path: %w", err)
	}
	if len(resp.Results) != len(r.Docs) {
		return nil, 0, 0, fmt.Errorf("served path: %d results for %d documents", len(resp.Results), len(r.Docs))
	}
	out := make([]rerank.Score, len(r.Docs))
	for _, res := range resp.Results {
		out[res.Index] = rerank.Score{Logit: res.RelevanceScore, Score: rerank.Sigmoid(res.RelevanceScore)}
	}
	callsAfter, _ := p.calls()
	return out, d, int(math.Round(callsAfter - callsBefore)), nil
}

// calls is the running sum and count of rerankd_request_engine_calls.
func (p *servedPath) calls() (sum float64, count uint64) {
	families, err := p.metrics.Registry.Gather()
	if err != nil {
		return 0, 0
	}
	for _, f := range families {
		if f.GetName() == "rerankd_request_engine_calls" && len(f.GetMetric()) == 1 {
			h := f.GetMetric()[0].GetHistogram()
			return h.GetSampleSum(), h.GetSampleCount()
		}
	}
	return 0, 0
}

// readyStart is one measured start of `rerankd serve` for the model.
type readyStart struct {
	Seconds float64 // process start to the first 200 from /ready
	PeakMB  float64 // the process's VmHWM when it became ready
}

// measureReady starts `rerankd serve` with st's settings n times, in a
// fresh process each time (rerankdExe), and times each to ready.
func measureReady(ctx context.Context, st servedSettings, n int) ([]readyStart, error) {
	exe, err := rerankdExe()
	if err != nil {
		return nil, fmt.Errorf("ready time: %w", err)
	}
	var out []readyStart
	for range n {
		r, err := oneStart(ctx, exe, st.args())
		if err != nil {
			return nil, fmt.Errorf("ready time: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

var bannerURL = regexp.MustCompile(`on (http://\S+)`)

func oneStart(ctx context.Context, exe string, args []string) (readyStart, error) {
	var r readyStart
	err := timeServeStart(ctx, exe, args, func(pid int, _ string, readyS float64) error {
		r = readyStart{Seconds: readyS, PeakMB: statusPeakMB(strconv.Itoa(pid))}
		return nil
	})
	return r, err
}

// medianInt is the median of xs (0 for none).
func medianInt(xs []int) float64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return median(f)
}
