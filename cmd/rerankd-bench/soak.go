package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/serve"
)

// soakFlags are the flags of `rerankd-bench loadtest --soak`.
type soakFlags struct {
	hold           time.Duration
	ramp           time.Duration
	clients        int
	sample         time.Duration
	rssTolerance   float64
	rssSlackMB     float64
	maxRSSMB       float64
	goroutineSlack int
	timeout        time.Duration
}

func addSoakFlags(fs *flag.FlagSet) *soakFlags {
	f := &soakFlags{}
	fs.DurationVar(&f.hold, "soak", 0, "soak mode: ramp to --clients, then hold them for this long (0: the plain load test)")
	fs.DurationVar(&f.ramp, "ramp", 30*time.Second, "soak mode: time to ramp from 1 to --clients clients")
	fs.IntVar(&f.clients, "clients", 256, "soak mode: concurrent clients at full load")
	fs.DurationVar(&f.sample, "sample", 0, "soak mode: RSS/heap/goroutine sampling interval (0: about 60 samples)")
	fs.Float64Var(&f.rssTolerance, "rss-tolerance", 0.25, "soak mode: settled RSS may exceed the baseline by this fraction...")
	fs.Float64Var(&f.rssSlackMB, "rss-slack-mb", 16, "soak mode: ...plus this many MB (allocator and runtime noise on a small baseline)")
	fs.Float64Var(&f.maxRSSMB, "max-rss-mb", 0, "soak mode: fail if RSS ever exceeds this (0: no bound)")
	fs.IntVar(&f.goroutineSlack, "goroutine-slack", 4, "soak mode: idle goroutines after load may exceed those before by this many")
	fs.DurationVar(&f.timeout, "request-timeout", serve.DefaultConfig().RequestTimeout, "soak mode: the server's per-request limit; a client gives up a little after it")
	return f
}

func (f *soakFlags) check() error {
	switch {
	case f.hold < 0 || f.ramp < 0:
		return fmt.Errorf("%w: --soak and --ramp must be >= 0", errUsage)
	case f.clients < 1:
		return fmt.Errorf("%w: --clients must be >= 1", errUsage)
	case f.rssTolerance < 0 || f.rssSlackMB < 0 || f.goroutineSlack < 0:
		return fmt.Errorf("%w: --rss-tolerance, --rss-slack-mb and --goroutine-slack must be >= 0", errUsage)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --request-timeout must be > 0", errUsage)
	}
	return nil
}

// Error kinds a soak client counts; anything but 200 and 429 fails the run.
const (
	kindOK = iota
	kind429
	kind4xx
	kind5xx
	kindTimeout
	kindConn
	numKinds
)

var kindNames = [numKinds]string{"ok", "429", "4xx", "5xx", "timeout", "conn"}

// latHist is a log-scale latency histogram (1% buckets from 1 us to 10 min):
// a soak keeps constant memory however many requests it sends, so its own
// bookkeeping cannot look like a server leak in the RSS series.
type latHist struct {
	counts [histBuckets]uint32
	n      uint64
	max    float64 // ms, exact
}

const (
	histMinMs   = 0.001
	histGrowth  = 1.01
	histBuckets = 2040 // log(600000/0.001)/log(1.01) = 2034
)

func (h *latHist) add(ms float64) {
	i := 0
	if ms > histMinMs {
		i = min(int(math.Log(ms/histMinMs)/math.Log(histGrowth)), histBuckets-1)
	}
	h.counts[i]++
	h.n++
	h.max = max(h.max, ms)
}

func (h *latHist) merge(o *latHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the q-quantile (0..1) within 1%; 0 when empty.
func (h *latHist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			return min(histMinMs*math.Pow(histGrowth, float64(i)+0.5), h.max)
		}
	}
	return h.max
}

// phaseTally is one client's record of one phase.
type phaseTally struct {
	lat   latHist // successful (200) requests
	kinds [numKinds]int
	pairs int
}

// soakPhase summarises one phase over all clients.
type soakPhase struct {
	Name      string         `json:"name"`
	Seconds   float64        `json:"seconds"`
	Requests  int            `json:"requests"`
	RPS       float64        `json:"requests_per_s"` // all answers, 429s included
	OKPerS    float64        `json:"ok_per_s"`
	PairsPerS float64        `json:"pairs_per_s"` // scored pairs of 200s
	P50ms     float64        `json:"p50_ms"`      // latencies of 200s
	P99ms     float64        `json:"p99_ms"`
	MaxMs     float64        `json:"max_ms"`
	Counts    map[string]int `json:"counts"` // ok, 429, 4xx, 5xx, timeout, conn
}

// soakSample is one point of the resource series. The server runs in this
// process, so RSS and heap are the server's plus the clients'.
type soakSample struct {
	T          float64 `json:"t_s"`
	Clients    int     `json:"clients"`
	RSSMB      float64 `json:"rss_mb"`
	HeapMB     float64 `json:"heap_mb"`
	Goroutines int     `json:"goroutines"` // all, idle fasthttp workers included
	Answers    int64   `json:"answers"`
}

type soakResult struct {
	Backend    string        `json:"backend"`
	Clients    int           `json:"clients"`
	RampS      float64       `json:"ramp_s"`
	HoldS      float64       `json:"hold_s"`
	DrainS     float64       `json:"drain_s"` // after the hold, until every client's last request is answered
	Mix        []int         `json:"documents_per_request_mix"`
	Phases     []soakPhase   `json:"phases"` // ramp, hold, all
	Samples    []soakSample  `json:"samples"`
	RSSBaseMB  float64       `json:"rss_baseline_mb"` // settled (after GC, memory returned to the OS), before load
	RSSPeakMB  float64       `json:"rss_peak_mb"`
	RSSAfterMB float64       `json:"rss_after_mb"` // settled, after load
	HeapBaseMB float64       `json:"heap_baseline_mb"`
	HeapAfter  float64       `json:"heap_after_mb"`
	Goroutines goroutineInfo `json:"goroutines"`
	Pass       bool          `json:"pass"`
	Failures   []string      `json:"failures,omitempty"`
}

// goroutineInfo counts goroutines at the checkpoints. All but Peak leave out
// idle fasthttp pool workers (see liveGoroutines).
type goroutineInfo struct {
	BeforeStart int `json:"before_server_start"`
	IdleBefore  int `json:"server_idle_before_load"`
	Peak        int `json:"peak"`
	IdleAfter   int `json:"server_idle_after_load"`
	AfterStop   int `json:"after_server_stop"`
}

// soakMix is the request-size mix: documents per request, drawn with the
// weights below, so small interactive calls queue behind bulk ones.
var (
	soakMix     = []int{1, 5, 20, 50, 100}
	soakWeights = []int{30, 30, 25, 10, 5}
)

// runSoak ramps from 1 to f.clients clients over f.ramp, holds them for
// f.hold, then checks the pass criteria: answers are only 200 or 429 (no
// 5xx, other 4xx, timeouts or connection errors); RSS settles back to
// within the tolerance of its baseline; idle goroutines return to their
// count before the load. start composes and starts the server under test
// with the given request timeout.
func runSoak(start func(timeout time.Duration) (*loadServer, error), f *soakFlags, asJSON bool, stdout, stderr io.Writer) error {
	if err := f.check(); err != nil {
		return err
	}
	res, err := soak(start, f, stderr)
	if err != nil {
		return err
	}
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
	} else {
		printSoak(stdout, res)
	}
	if !res.Pass {
		return fmt.Errorf("soak failed: %v", res.Failures)
	}
	return nil
}

func soak(start func(timeout time.Duration) (*loadServer, error), f *soakFlags, stderr io.Writer) (*soakResult, error) {
	res := &soakResult{Clients: f.clients, RampS: f.ramp.Seconds(), HoldS: f.hold.Seconds(), Mix: soakMix}
	bodies := soakBodies()
	// All bookkeeping is allocated before the baseline is taken.
	tallies := make([][2]phaseTally, f.clients)
	total := f.ramp + f.hold
	every := f.sample
	if every <= 0 {
		every = max(time.Second, total/60)
	}
	res.Samples = make([]soakSample, 0, int(total/every)+8)

	res.Goroutines.BeforeStart = settleGoroutines(0, 0)
	ls, err := start(f.timeout)
	if err != nil {
		return nil, err
	}
	res.Backend = ls.Backend.Name()
	url, stop := ls.url, ls.stop
	tr := &http.Transport{MaxIdleConnsPerHost: f.clients}
	cl, err := client.New(client.Config{BaseURL: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: tr, Timeout: f.timeout + 10*time.Second}})
	if err != nil {
		stop()
		return nil, err
	}

	// Warm up with one request of each size so lazily built state (pools,
	// ORT arenas for these shapes) is in the baseline, then settle.
	for _, size := range bodies {
		if k, _ := post(cl, size[0]); k != kindOK {
			stop()
			return nil, fmt.Errorf("warm-up request failed (%s)", kindNames[k])
		}
	}
	tr.CloseIdleConnections()
	res.Goroutines.IdleBefore = settleGoroutines(res.Goroutines.BeforeStart+2, 2*time.Second)
	res.RSSBaseMB, res.HeapBaseMB = settledMemory()

	fmt.Fprintf(stderr, "soak: %s, ramp 1 -> %d clients over %v, hold %v; mix %v documents (weights %v)\n",
		res.Backend, f.clients, f.ramp, f.hold, soakMix, soakWeights)
	var (
		active   atomic.Int64 // clients running
		answers  atomic.Int64
		stopping atomic.Bool
		phase    atomic.Int32 // 0 ramp, 1 hold
		wg       sync.WaitGroup
	)
	begin := time.Now()
	client1 := func(id int) {
		defer wg.Done()
		defer active.Add(-1)
		rng := rand.New(rand.NewPCG(uint64(id), 0x50a4))
		for !stopping.Load() {
			size := pickWeighted(rng, soakWeights)
			body := bodies[size][rng.IntN(len(bodies[size]))]
			p := phase.Load()
			t0 := time.Now()
			k, _ := post(cl, body)
			el := ms(time.Since(t0))
			answers.Add(1)
			t := &tallies[id][p]
			t.kinds[k]++
			if k == kindOK {
				t.lat.add(el)
				t.pairs += soakMix[size]
			}
		}
	}
	// Sampler: RSS, heap, goroutines, clients, answers so far.
	samplerDone := make(chan struct{})
	var samplerWG sync.WaitGroup
	samplerWG.Add(1)
	go func() {
		defer samplerWG.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			res.Samples = append(res.Samples, sampleNow(time.Since(begin), int(active.Load()), answers.Load()))
			select {
			case <-samplerDone:
				return
			case <-tk.C:
			}
		}
	}()
	// Ramp: client i starts at i*ramp/clients.
	for i := range f.clients {
		if d := time.Duration(int64(f.ramp) * int64(i) / int64(f.clients)); d > time.Since(begin) {
			time.Sleep(d - time.Since(begin))
		}
		wg.Add(1)
		active.Add(1)
		go client1(i)
	}
	rampEnd := time.Since(begin)
	phase.Store(1)
	time.Sleep(f.hold)
	holdEnd := time.Since(begin)
	stopping.Store(true)
	wg.Wait() // clients finish the request in flight: up to a latency
	end := time.Since(begin)
	res.DrainS = (end - holdEnd).Seconds()
	close(samplerDone)
	samplerWG.Wait()
	res.Samples = append(res.Samples, sampleNow(time.Since(begin), 0, answers.Load()))

	tr.CloseIdleConnections()
	res.Goroutines.IdleAfter = settleGoroutines(res.Goroutines.IdleBefore+f.goroutineSlack, 10*time.Second)
	res.RSSAfterMB, res.HeapAfter = settledMemory()
	stop()
	res.Goroutines.AfterStop = settleGoroutines(res.Goroutines.BeforeStart+f.goroutineSlack, 10*time.Second)

	// Summaries: ramp, hold, all. Requests count in the phase they started
	// in; ramp and hold rates divide by the phase's length, "all" by the
	// whole run including the drain, so only "all" is exact.
	var all phaseTally
	for p, secs := range []float64{rampEnd.Seconds(), (holdEnd - rampEnd).Seconds()} {
		var sum phaseTally
		for i := range tallies {
			addTally(&sum, &tallies[i][p])
		}
		addTally(&all, &sum)
		res.Phases = append(res.Phases, summarise([]string{"ramp", "hold"}[p], secs, &sum))
	}
	res.Phases = append(res.Phases, summarise("all", end.Seconds(), &all))
	for _, s := range res.Samples {
		res.RSSPeakMB = max(res.RSSPeakMB, s.RSSMB)
		res.Goroutines.Peak = max(res.Goroutines.Peak, s.Goroutines)
	}
	res.judge(f, &all)
	return res, nil
}

// judge applies the pass criteria.
func (r *soakResult) judge(f *soakFlags, all *phaseTally) {
	fail := func(format string, a ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, a...)) }
	if all.kinds[kindOK] == 0 {
		fail("no request succeeded")
	}
	for _, k := range []int{kind4xx, kind5xx, kindTimeout, kindConn} {
		if n := all.kinds[k]; n > 0 {
			fail("%d answers of kind %s (only 200 and 429 are allowed)", n, kindNames[k])
		}
	}
	if limit := r.RSSBaseMB*(1+f.rssTolerance) + f.rssSlackMB; r.RSSAfterMB > limit {
		fail("settled RSS %.1f MB after load exceeds baseline %.1f MB + %.0f%% + %.0f MB = %.1f MB",
			r.RSSAfterMB, r.RSSBaseMB, 100*f.rssTolerance, f.rssSlackMB, limit)
	}
	if f.maxRSSMB > 0 && r.RSSPeakMB > f.maxRSSMB {
		fail("peak RSS %.1f MB exceeds --max-rss-mb %.0f", r.RSSPeakMB, f.maxRSSMB)
	}
	g := r.Goroutines
	if g.IdleAfter > g.IdleBefore+f.goroutineSlack {
		fail("%d goroutines with the server idle after load, %d before (slack %d): leak", g.IdleAfter, g.IdleBefore, f.goroutineSlack)
	}
	if g.AfterStop > g.BeforeStart+f.goroutineSlack {
		fail("%d goroutines after the server stopped, %d before it started (slack %d): leak", g.AfterStop, g.BeforeStart, f.goroutineSlack)
	}
	r.Pass = len(r.Failures) == 0
}

func addTally(dst, src *phaseTally) {
	dst.lat.merge(&src.lat)
	for k, n := range src.kinds {
		dst.kinds[k] += n
	}
	dst.pairs += src.pairs
}

func summarise(name string, secs float64, t *phaseTally) soakPhase {
	p := soakPhase{Name: name, Seconds: secs, P50ms: t.lat.quantile(0.5), P99ms: t.lat.quantile(0.99), MaxMs: t.lat.max,
		Counts: map[string]int{}}
	for k, n := range t.kinds {
		p.Requests += n
		p.Counts[kindNames[k]] = n
	}
	if secs > 0 {
		p.RPS, p.OKPerS, p.PairsPerS = float64(p.Requests)/secs, float64(t.kinds[kindOK])/secs, float64(t.pairs)/secs
	}
	return p
}

// soakBodies returns, for each size of soakMix, a few distinct request
// bodies of that many documents (the texts of `rerankd-bench bench`).
func soakBodies() [][]api.RerankRequest {
	out := make([][]api.RerankRequest, len(soakMix))
	for i, n := range soakMix {
		for j, r := range benchWorkload(8, n, uint64(100+i)) {
			// Vary the answer size too: some ask for the documents back or a top_n.
			req := rerankRequest(r)
			switch j % 4 {
			case 1:
				req.ReturnDocuments = true
			case 2:
				three := 3
				req.TopN = &three
			}
			out[i] = append(out[i], req)
		}
	}
	return out
}

func pickWeighted(rng *rand.Rand, w []int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	r := rng.IntN(total)
	for i, x := range w {
		if r < x {
			return i
		}
		r -= x
	}
	return len(w) - 1
}

// post sends one request (retries off: a 429 is an outcome the soak
// counts) and classifies the outcome.
func post(c *client.Client, req api.RerankRequest) (int, error) {
	_, err := c.Rerank(context.Background(), req)
	var e *client.Error
	var ne interface{ Timeout() bool }
	switch {
	case err == nil:
		return kindOK, nil
	case errors.As(err, &e) && e.Status == http.StatusTooManyRequests:
		return kind429, nil
	case errors.As(err, &e) && e.Status >= 500:
		return kind5xx, err
	case errors.As(err, &e):
		return kind4xx, err
	case errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded):
		return kindTimeout, err
	}
	return kindConn, err // no answer, or one that broke off
}

func sampleNow(t time.Duration, clients int, answers int64) soakSample {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return soakSample{T: math.Round(t.Seconds()*10) / 10, Clients: clients, RSSMB: rssMB(),
		HeapMB: float64(m.HeapAlloc) / (1 << 20), Goroutines: runtime.NumGoroutine(), Answers: answers}
}

// settledMemory collects garbage and returns freed pages to the OS before
// reading RSS: the Go runtime gives memory back lazily, so without this a
// healthy server's RSS after load measures the scavenger's pace, not a leak.
func settledMemory() (rss, heap float64) {
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(100 * time.Millisecond)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return rssMB(), float64(m.HeapAlloc) / (1 << 20)
}

// settleGoroutines waits up to wait for the count of live goroutines to
// fall to target (connection goroutines exit asynchronously after their
// sockets close) and returns the count then.
func settleGoroutines(target int, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for {
		n := liveGoroutines()
		if n <= target || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveGoroutines counts goroutines other than idle fasthttp pool workers.
// fasthttp keeps a worker per recently served connection for up to its
// MaxIdleWorkerDuration (10 s, checked every 10 s) to reuse it; those are a
// bounded pool, not a leak, and waiting 20 s for them would make every check
// slow. A worker stuck in a handler is counted: its stack is in the handler,
// not parked at the top of workerFunc.
func liveGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	live := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.TrimSpace(g) != "" && !idlePoolWorker(g) {
			live++
		}
	}
	return live
}

// idlePoolWorker reports whether a goroutine's stack dump is a fasthttp
// worker waiting for its next connection.
func idlePoolWorker(stack string) bool {
	lines := strings.Split(stack, "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "[chan receive") {
		return false
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "runtime.") {
			continue // file:line lines and the runtime's parking frames
		}
		return strings.Contains(l, "fasthttp.(*workerPool).workerFunc")
	}
	return false
}

func printSoak(w io.Writer, r *soakResult) {
	fmt.Fprintf(w, "soak %s: ramp 1 -> %d clients in %.0fs, hold %.0fs, drain %.1fs; documents per request %v\n",
		r.Backend, r.Clients, r.RampS, r.HoldS, r.DrainS, r.Mix)
	fmt.Fprintf(w, "%-5s %7s %8s %8s %9s %9s %9s %10s  %s\n", "phase", "secs", "req/s", "ok/s", "pairs/s", "p50 ms", "p99 ms", "max ms", "counts")
	for _, p := range r.Phases {
		fmt.Fprintf(w, "%-5s %7.1f %8.1f %8.1f %9.0f %9.2f %9.2f %10.2f  %v\n", p.Name, p.Seconds, p.RPS, p.OKPerS, p.PairsPerS, p.P50ms, p.P99ms, p.MaxMs, p.Counts)
	}
	fmt.Fprintf(w, "%7s %7s %8s %8s %10s %9s\n", "t s", "clients", "rss MB", "heap MB", "goroutines", "answers")
	for _, s := range r.Samples {
		fmt.Fprintf(w, "%7.1f %7d %8.1f %8.1f %10d %9d\n", s.T, s.Clients, s.RSSMB, s.HeapMB, s.Goroutines, s.Answers)
	}
	g := r.Goroutines
	fmt.Fprintf(w, "RSS settled: baseline %.1f MB, after %.1f MB (peak %.1f MB); heap %.1f -> %.1f MB\n", r.RSSBaseMB, r.RSSAfterMB, r.RSSPeakMB, r.HeapBaseMB, r.HeapAfter)
	fmt.Fprintf(w, "goroutines: %d before start, %d idle before load, peak %d, %d idle after load, %d after stop\n",
		g.BeforeStart, g.IdleBefore, g.Peak, g.IdleAfter, g.AfterStop)
	if r.Pass {
		fmt.Fprintln(w, "PASS: only 200/429 answers, RSS back to baseline, no goroutine leak")
		return
	}
	for _, f := range r.Failures {
		fmt.Fprintln(w, "FAIL:", f)
	}
}
