package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// tuneSetting is one runtime layout `rerankd-bench tune` compares: the server
// `rerankd serve --threads Threads --workers Sessions` composes (Spinning
// false: its intra-op threads block when idle instead of spinning),
// serving Sessions requests at once.
type tuneSetting struct {
	Threads  int  `json:"threads"`
	Spinning bool `json:"spinning"`
	Sessions int  `json:"sessions"` // serve's --workers: concurrent engine calls, and the requests sent at once
	// Prepack is serve's --prepack ("": its default): --prepack-compare
	// measures what packing the weights once at start gains per request.
	Prepack string `json:"prepack,omitempty"`
}

// tuneResult is one setting's measurement.
type tuneResult struct {
	tuneSetting
	PairsPerS float64 `json:"pairs_per_s"`
	P50ms     float64 `json:"request_p50_ms"` // one request, start to end, while the others run
	// Ratio is pairs/s over the first setting's (the default), same run.
	Ratio float64 `json:"ratio_vs_first"`
}

// tuneSettings are the layouts worth comparing on a machine of `cores`
// cores: the default first (one worker using every core, spinning).
func tuneSettings(cores int) []tuneSetting {
	out := []tuneSetting{{Threads: cores, Spinning: true, Sessions: 1}, {Threads: cores, Sessions: 1}}
	if cores > 1 {
		out = append(out, tuneSetting{Threads: 1, Spinning: true, Sessions: 1}, tuneSetting{Threads: 1, Sessions: cores}, tuneSetting{Threads: cores, Sessions: 2})
	}
	return out
}

// flags are serve's flags for st over the model folder dir, the rest
// serve's defaults.
func (st tuneSetting) flags(dir, ortLib, tok string, q onnx.Quant, dev *device.Flags) app.Config {
	c := labConfig()
	c.Model.Path, c.Model.RuntimeLib, c.Model.Tokenizer, c.Model.Quant = dir, ortLib, tok, q.String()
	c.Model.Threads, c.Scheduler.Workers, c.Tuning.NoSpinning = st.Threads, st.Sessions, !st.Spinning
	withDevice(&c, dev)
	if st.Prepack != "" {
		c.Tuning.Prepack = st.Prepack
	}
	return c
}

// runTune implements `rerankd-bench tune`: composes one server per setting with
// app.Build, exactly as `rerankd serve` composes it (HTTP, scheduler,
// its own engine and prefix cache), and replays the bench workload through
// all of them in turn, round by round, so a machine whose load drifts
// slows them alike.
func runTune(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (required)")
	candidates := fs.Int("candidates", 20, "memories per request")
	rounds := fs.Int("rounds", 4, "rounds; each setting scores as many requests per round as it has sessions")
	cores := fs.Int("cores", 2, "cores to plan for (this machine has 2)")
	quant := fs.String("quant", "fp32", "weights: fp32 or int8")
	asJSON := fs.Bool("json", false, "print JSON")
	prepackCompare := fs.Bool("prepack-compare", false, "compare serve's --prepack=true and --prepack=false (default threads) instead of the thread layouts: what packing the weights once at start gains per request")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	dev := device.Define(fs)
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *dir == "" || *candidates < 1 || *rounds < 1 || *cores < 1 {
		return fmt.Errorf("%w: --model required; --candidates, --rounds and --cores must be >= 1", errUsage)
	}
	if *cores > 1024 || *rounds > 10_000 || *candidates > 10_000 {
		return fmt.Errorf("%w: --cores at most 1024, --rounds and --candidates at most 10000", errUsage)
	}
	q, err := onnx.ParseQuant(*quant)
	if err != nil {
		return fmt.Errorf("%w: --quant: %w", errUsage, err)
	}
	// --model is a folder here (serve also takes a hub repo id): a missing
	// one fails the run, not its usage.
	if _, err := os.Stat(*dir); err != nil {
		return fmt.Errorf("model folder %s: %w", *dir, err)
	}
	settings := tuneSettings(*cores)
	if *prepackCompare {
		settings = []tuneSetting{settings[0], settings[0]}
		settings[0].Prepack, settings[1].Prepack = "true", "false"
	}
	servers := make([]*loadServer, len(settings))
	clients := make([]*client.Client, len(settings))
	defer func() {
		for _, ls := range servers {
			if ls != nil {
				ls.stop() // closes its backend
			}
		}
	}()
	for i, st := range settings {
		ls, err := startComposed(st.flags(*dir, dev.ORTLib(*ortLib), *tok, q, dev), stderr)
		if err != nil {
			return err
		}
		servers[i] = ls
		// No retries: a 429 here is a failure of the measurement, not load.
		c, err := client.New(client.Config{BaseURL: ls.url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: st.Sessions}, Timeout: 10 * time.Minute}})
		if err != nil {
			return err
		}
		clients[i] = c
	}
	reqs := benchWorkload(*rounds*maxSessions(settings)+1, *candidates, 11)
	ctx := context.Background()
	for i, st := range settings { // warm-up: every worker
		if _, _, err := scoreConcurrently(ctx, clients[i], slices.Repeat(reqs[:1], st.Sessions)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "tuning %d settings x %d rounds of %d-memory requests...\n", len(settings), *rounds, *candidates)
	pairs := make([]int, len(settings))
	elapsed := make([]time.Duration, len(settings))
	lat := make([][]float64, len(settings))
	per := maxSessions(settings)
	bar := progress.New(stderr, int64(*rounds*len(settings)), "tune", progress.Items)
	for r := range *rounds {
		for i, st := range settings {
			if r+i > 0 {
				bar.Add(1) // the settings scored so far; Finish counts the last
			}
			// Every setting scores the same requests in a round.
			batch := reqs[1+r*per : 1+r*per+st.Sessions]
			d, each, err := scoreConcurrently(ctx, clients[i], batch)
			if err != nil {
				return err
			}
			pairs[i] += len(batch) * *candidates
			elapsed[i] += d
			lat[i] = append(lat[i], each...)
		}
	}
	bar.Finish()
	out := make([]tuneResult, len(settings))
	for i, st := range settings {
		out[i] = tuneResult{tuneSetting: st, PairsPerS: float64(pairs[i]) / elapsed[i].Seconds(), P50ms: percentile(lat[i], 50)}
		out[i].Ratio = out[i].PairsPerS / out[0].PairsPerS
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	for _, r := range out {
		prepack := ""
		if r.Prepack != "" {
			prepack = " prepack " + r.Prepack
		}
		if _, err := fmt.Fprintf(stdout, "threads %d spinning %-5v sessions %d%s: %.2f pairs/s (%.2fx), request p50 %.0f ms\n",
			r.Threads, r.Spinning, r.Sessions, prepack, r.PairsPerS, r.Ratio, r.P50ms); err != nil {
			return err
		}
	}
	return nil
}

func maxSessions(s []tuneSetting) int {
	return slices.MaxFunc(s, func(a, b tuneSetting) int { return a.Sessions - b.Sessions }).Sessions
}

// scoreConcurrently sends every request of reqs to the server at c at
// once and returns the wall time and each request's latency in ms.
func scoreConcurrently(ctx context.Context, c *client.Client, reqs []rerank.Request) (time.Duration, []float64, error) {
	lat := make([]float64, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	start := time.Now()
	for i := range reqs {
		wg.Go(func() {
			t0 := time.Now()
			_, errs[i] = c.Rerank(ctx, rerankRequest(reqs[i]))
			lat[i] = ms(time.Since(t0))
		})
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, nil, fmt.Errorf("served path: %w", err)
	}
	return d, lat, nil
}
