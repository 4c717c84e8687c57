package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/serve"
)

// levelResult is one concurrency level of `rerankd-bench loadtest`.
type levelResult struct {
	Concurrency int            `json:"concurrency"`
	Requests    int            `json:"requests"`
	RPS         float64        `json:"requests_per_s"`
	PairsPerS   float64        `json:"pairs_per_s"`
	P50ms       float64        `json:"p50_ms"`
	P99ms       float64        `json:"p99_ms"`
	Codes       map[string]int `json:"codes"`
}

type loadResult struct {
	Backend        string        `json:"backend"`
	Candidates     int           `json:"candidates"`
	Levels         []levelResult `json:"levels"`
	RawP50ms       float64       `json:"raw_model_p50_ms"`       // requests scored directly, no HTTP, no scheduler
	ServedP50ms    float64       `json:"served_p50_ms"`          // the same requests through the server, alternating with raw
	OverheadRatio  float64       `json:"server_overhead_ratio"`  // (served p50 - raw p50) / served p50, one client
	Overload       levelResult   `json:"overload"`               // tiny queue, many clients
	RSSBeforeMB    float64       `json:"rss_before_overload_mb"` // this process (server in-process)
	RSSAfterMB     float64       `json:"rss_after_overload_mb"`
	Overload5xx    int           `json:"overload_5xx"`
	Overload429    int           `json:"overload_429"`
	OverloadOthers int           `json:"overload_other_errors"`
}

// runLoadtest implements `rerankd-bench loadtest`: an in-process server on a
// loopback port, driven by real HTTP clients at several concurrency levels,
// compared with the same requests scored directly, then pushed past a small
// queue to show 429s instead of errors or memory growth.
func runLoadtest(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (empty: the lexical default)")
	candidates := fs.Int("candidates", 20, "documents per request")
	levels := fs.String("concurrency", "1,8,64", "comma-separated client counts")
	perLevel := fs.Int("requests", 0, "requests per level (0: twice the concurrency, at least 16)")
	overloadN := fs.Int("overload-requests", 256, "requests in the overload phase (64 clients, queue of 2 requests)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library")
	dev := device.Define(fs)
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	quant := fs.String("quant", "fp32", "model weights: fp32 or int8 (the folder's variant)")
	noShared := fs.Bool("no-shared-prefix", false, "run model.onnx even when the folder has the shared-prefix graph (the path before it existed, for before/after comparisons)")
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	cacheMB := fs.Int("prefix-cache-mb", model.DefaultPrefixCacheMB, "the shared-prefix engine's cross-request prefix cache in MiB (0: off, for before/after comparisons)")
	workers := fs.Int("workers", scheduler.DefaultConfig().Workers, "the scheduler's concurrent engine calls")
	soakF := addSoakFlags(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	var conc []int
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("%w: --concurrency %q: want positive integers", errUsage, *levels)
		}
		conc = append(conc, n)
	}
	if *candidates < 1 || *workers < 1 || *threads < 0 || *cacheMB < 0 {
		return fmt.Errorf("%w: --candidates and --workers must be >= 1, --threads and --prefix-cache-mb >= 0", errUsage)
	}
	if *perLevel < 0 || *overloadN < 1 || *workers > maxLabWorkers || *candidates > 10_000 {
		return fmt.Errorf("%w: --requests must be >= 0, --overload-requests >= 1, --workers at most %d, --candidates at most 10000", errUsage, maxLabWorkers)
	}
	if err := soakF.validate(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	q, err := onnx.ParseQuant(*quant)
	if err != nil {
		return fmt.Errorf("%w: --quant: %w", errUsage, err)
	}
	if *dir != "" {
		// --model is a folder here (serve also takes a hub repo id): a
		// missing one fails the run, not its usage.
		if _, err := os.Stat(*dir); err != nil {
			return fmt.Errorf("model folder %s: %w", *dir, err)
		}
	}
	reqs := benchWorkload(64, *candidates, 7)
	// Every server is built from serve's settings by app.Build, exactly
	// as `rerankd serve` composes it (model, scheduler, metrics, limits).
	flagsFor := func(sc scheduler.Config, timeout time.Duration) app.Config {
		c := labConfig()
		c.Model.Path, c.Model.RuntimeLib, c.Model.Tokenizer, c.Model.Quant = *dir, dev.ORTLib(*ortLib), *tok, q.String()
		c.Model.Threads, c.Model.PrefixCacheMB, c.Tuning.NoSharedPrefix = *threads, *cacheMB, *noShared
		c.Scheduler = sc
		c.Scheduler.Workers = *workers
		withDevice(&c, dev)
		if timeout > 0 {
			c.Server.RequestTimeout = timeout
		}
		return c
	}
	notes := stderr // model download and conversion progress
	if *dir == "" {
		notes = io.Discard // not serve's note on the lexical default
	}
	if soakF.hold > 0 {
		return runSoak(func(timeout time.Duration) (*loadServer, error) {
			return startComposed(flagsFor(scheduler.DefaultConfig(), timeout), notes)
		}, soakF, *asJSON, stdout, stderr)
	}
	res := loadResult{Candidates: *candidates}
	ls, err := startComposed(flagsFor(scheduler.DefaultConfig(), 0), notes)
	if err != nil {
		return err
	}
	res.Backend = ls.Backend.Name()
	url, stop, scorer := ls.url, ls.stop, ls.Scorer
	// Server overhead: the same requests scored directly (no HTTP, no
	// scheduler, on the server's own engine) and through the server,
	// alternately, so drift in machine load hits both sides alike. The
	// prefix cache is bypassed meanwhile: the second scoring of a query
	// would otherwise find its whole prefix cached and look cheaper than
	// the first.
	n1 := res.pairedRequests(*perLevel)
	var ps *model.PrefixSession
	if scorer != nil {
		ps, _ = scorer.Engine().(*model.PrefixSession)
	}
	if ps != nil {
		ps.SetCacheBypass(true)
	}
	var raw, served []float64
	for i := range n1 {
		r := reqs[i%len(reqs)]
		t0 := time.Now()
		if scorer != nil {
			_, err = scorer.Score(context.Background(), rerank.Request{Query: r.Query, Docs: r.Docs, MaxDocTokens: serve.DefaultConfig().MaxTokensPerDoc})
		} else {
			lexical.Default().Score(r.Query, r.Docs)
		}
		if err != nil {
			return err
		}
		raw = append(raw, ms(time.Since(t0)))
		l := drive(url, reqs[i%len(reqs):i%len(reqs)+1], 1, 1)
		if l.Codes["200"] != 1 {
			return fmt.Errorf("paired request %d failed: %v", i, l.Codes)
		}
		served = append(served, l.P50ms)
	}
	if ps != nil {
		ps.SetCacheBypass(false)
	}
	res.RawP50ms, res.ServedP50ms = percentile(raw, 50), percentile(served, 50)
	if res.ServedP50ms > 0 {
		res.OverheadRatio = (res.ServedP50ms - res.RawP50ms) / res.ServedP50ms
	}
	// Each level sends queries not sent before (until the workload wraps
	// around), as an agent asking new questions would: a repeated query
	// finds its whole prefix in the cache.
	offset := n1
	for _, c := range conc {
		n := *perLevel
		if n == 0 {
			n = max(2*c, 16)
		}
		fmt.Fprintf(stderr, "concurrency %d: %d requests...\n", c, n)
		res.Levels = append(res.Levels, drive(url, rotate(reqs, offset), c, n))
		offset += n
	}
	stop()
	// Overload: a queue of two requests' pairs, 64 clients.
	sc := scheduler.DefaultConfig()
	sc.QueueSize = 2 * *candidates
	ols, err := startComposed(flagsFor(sc, 0), notes)
	if err != nil {
		return err
	}
	url, stop = ols.url, ols.stop
	res.RSSBeforeMB = rssMB()
	fmt.Fprintf(stderr, "overload: 64 clients, queue of %d pairs, %d requests...\n", sc.QueueSize, *overloadN)
	res.Overload = drive(url, reqs, 64, *overloadN)
	res.RSSAfterMB = rssMB()
	stop()
	for code, n := range res.Overload.Codes {
		switch {
		case code == "429":
			res.Overload429 += n
		case strings.HasPrefix(code, "5"):
			res.Overload5xx += n
		case code != "200":
			res.OverloadOthers += n
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	for _, l := range res.Levels {
		fmt.Fprintf(stdout, "concurrency %3d: %6.1f req/s %7.1f pairs/s  p50 %8.1f ms  p99 %8.1f ms  codes %v\n",
			l.Concurrency, l.RPS, l.PairsPerS, l.P50ms, l.P99ms, l.Codes)
	}
	_, err = fmt.Fprintf(stdout, "one client, alternating: raw model p50 %.1f ms, served p50 %.1f ms: server overhead %.1f%%\noverload: %d x 429, %d x 5xx, %d other errors; RSS %.0f -> %.0f MB\n",
		res.RawP50ms, res.ServedP50ms, 100*res.OverheadRatio, res.Overload429, res.Overload5xx, res.OverloadOthers, res.RSSBeforeMB, res.RSSAfterMB)
	return err
}

// pairedRequests is how many requests the overhead comparison uses.
func (r *loadResult) pairedRequests(perLevel int) int {
	if perLevel > 0 {
		return perLevel
	}
	return 16
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadServer is a server the load tools drive, built by app.Build
// exactly as `rerankd serve` builds it, on a loopback port.
type loadServer struct {
	*app.App
	url  string
	stop func() // shuts the server down, closing its backend
}

// startComposed composes the server f describes and serves it on a
// loopback port.
func startComposed(c app.Config, stderr io.Writer) (*loadServer, error) {
	c.Notices = stderr
	comp, err := app.Build(c)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = comp.Server.Shutdown(context.Background())
		return nil, err
	}
	go func() { _ = comp.Server.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = comp.Shutdown(ctx)
	}
	return &loadServer{App: comp, url: "http://" + ln.Addr().String(), stop: stop}, nil
}

// drive sends n requests from c concurrent clients and summarises them.
// rotate returns reqs starting at index k (modulo its length).
func rotate(reqs []rerank.Request, k int) []rerank.Request {
	k %= len(reqs)
	return append(append([]rerank.Request{}, reqs[k:]...), reqs[:k]...)
}

func drive(base string, reqs []rerank.Request, c, n int) levelResult {
	bodies := make([]api.RerankRequest, len(reqs))
	for i, r := range reqs {
		bodies[i] = rerankRequest(r)
	}
	// Retries off: a 429 is what the overload level measures.
	cl, err := client.New(client.Config{BaseURL: base, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}, Timeout: 10 * time.Minute}})
	if err != nil {
		panic(err) // base comes from startServer
	}
	lat := make([]float64, n)
	codes := make([]string, n)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				_, err := cl.Rerank(context.Background(), bodies[i%len(bodies)])
				codes[i] = statusOf(err)
				lat[i] = float64(time.Since(t0).Microseconds()) / 1000
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	el := time.Since(start).Seconds()
	r := levelResult{Concurrency: c, Requests: n, RPS: float64(n) / el, Codes: map[string]int{}}
	ok := 0
	var okLat []float64
	for i, code := range codes {
		r.Codes[code]++
		if code == "200" {
			ok++
			okLat = append(okLat, lat[i])
		}
	}
	r.PairsPerS = float64(ok*len(reqs[0].Docs)) / el
	r.P50ms, r.P99ms = percentile(okLat, 50), percentile(okLat, 99)
	return r
}

// rerankRequest is r in the API's Cohere/Jina style.
func rerankRequest(r rerank.Request) api.RerankRequest {
	docs := make([]api.Document, len(r.Docs))
	for i, d := range r.Docs {
		docs[i] = api.Document{Text: d}
	}
	return api.RerankRequest{Query: r.Query, Documents: docs}
}

// statusOf is the HTTP status a client call ended with, as text, or
// "transport" when no answer came.
func statusOf(err error) string {
	var e *client.Error
	switch {
	case err == nil:
		return "200"
	case errors.As(err, &e):
		return strconv.Itoa(e.Status)
	}
	return "transport"
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// rssMB reads this process's resident memory from /proc (Linux).
func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize()) / (1 << 20)
}

// maxLabWorkers bounds the lab tools' concurrent engine calls: each holds
// an engine session's buffers.
const maxLabWorkers = 1024
