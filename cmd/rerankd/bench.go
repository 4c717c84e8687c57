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
	"strings"
	"time"

	"github.com/rerankd/rerankd/model"
)

// benchResult is the JSON contract of `rerankd bench`.
type benchResult struct {
	Requests           int     `json:"requests"`
	Pairs              int     `json:"pairs"`
	MeanTokensPerPair  float64 `json:"mean_tokens_per_pair"`
	PairsPerS          float64 `json:"pairs_per_s"`          // our path: batched, end to end through the scorer
	BaselinePairsPerS  float64 `json:"baseline_pairs_per_s"` // same pairs, one engine call per pair
	Speedup            float64 `json:"speedup"`
	UsefulGFLOPs       float64 `json:"useful_gflops,omitempty"` // FLOPs of the tokens computed / time (needs config.json)
	PeakGFLOPs         float64 `json:"peak_gflops"`             // ONNX Runtime MatMul chain, same session settings
	Efficiency         float64 `json:"efficiency,omitempty"`    // useful / peak
	MaxAbsScoreError   float64 `json:"max_abs_score_error"`     // ours vs baseline, same pairs
	Threads            int     `json:"threads"`
	Engine             string  `json:"engine"`
	RandomWeightsNotes string  `json:"note"`
}

// runBench implements `rerankd bench`: replays LoCoMo-like requests (a ~15
// token question against memories of ~20-80 tokens, default instruction)
// and measures our scoring path against a one-pair-per-call baseline and
// the machine's MatMul throughput, all in the same run.
func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (required); `make bench` generates a full-size one")
	candidates := fs.Int("candidates", 20, "memories per request")
	requests := fs.Int("requests", 5, "requests to replay")
	asJSON := fs.Bool("json", false, "print one JSON object")
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	seed := fs.Uint64("seed", 1, "workload seed")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *dir == "" || *candidates < 1 || *requests < 1 {
		return fmt.Errorf("%w: --model required; --candidates and --requests must be >= 1", errUsage)
	}
	o := model.DefaultOptions()
	o.RuntimeLib, o.Tokenizer, o.Session.IntraOpThreads = *ortLib, *tok, *threads
	s, info, err := model.Open(*dir, o)
	if err != nil {
		return err
	}
	defer s.Close() //nolint:errcheck // measurements are already printed
	baseCfg := o.Scorer
	baseCfg.MaxBatch = 1
	base, err := s.WithConfig(baseCfg)
	if err != nil {
		return err
	}
	reqs := benchWorkload(*requests, *candidates, *seed)
	ctx := context.Background()
	if _, err := s.Score(ctx, reqs[0]); err != nil { // warm-up
		return err
	}
	fmt.Fprintf(stderr, "scoring %d requests x %d memories (batched)...\n", *requests, *candidates)
	ours, oursTime, err := timeRequests(ctx, s, reqs)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "scoring the same pairs one per call (baseline)...")
	baseline, baseTime, err := timeRequests(ctx, base, reqs)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "measuring the MatMul-chain peak...")
	hidden := 1024
	if info.Config != nil {
		hidden = info.Config.HiddenSize
	}
	peak, err := model.PeakGFLOPs(o.Session, 16, hidden, 64, 2*time.Second)
	if err != nil {
		return err
	}
	r := benchResult{Requests: *requests, Pairs: len(ours), PeakGFLOPs: peak, Threads: *threads, Engine: string(info.Engine),
		RandomWeightsNotes: "speed only: scores of a random-weight model carry no meaning"}
	tokens, flops := 0, 0.0
	for i, sc := range ours {
		tokens += sc.Tokens
		r.MaxAbsScoreError = math.Max(r.MaxAbsScoreError, math.Abs(sc.Score-baseline[i].Score))
		if info.Config != nil {
			flops += info.Config.FLOPsPerToken()*float64(sc.Tokens) + info.Config.AttentionFLOPs(sc.Tokens)
		}
	}
	r.MeanTokensPerPair = float64(tokens) / float64(len(ours))
	r.PairsPerS = float64(len(ours)) / oursTime.Seconds()
	r.BaselinePairsPerS = float64(len(ours)) / baseTime.Seconds()
	r.Speedup = r.PairsPerS / r.BaselinePairsPerS
	if flops > 0 {
		r.UsefulGFLOPs = flops / oursTime.Seconds() / 1e9
		r.Efficiency = r.UsefulGFLOPs / peak
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	_, err = fmt.Fprintf(stdout, "pairs/s %.2f (baseline %.2f, speedup %.2fx); useful %.1f GFLOP/s of peak %.1f (efficiency %.2f); "+
		"%.0f tokens/pair; max score error %.2g\n", r.PairsPerS, r.BaselinePairsPerS, r.Speedup, r.UsefulGFLOPs, r.PeakGFLOPs,
		r.Efficiency, r.MeanTokensPerPair, r.MaxAbsScoreError)
	return err
}

func timeRequests(ctx context.Context, s *model.Scorer, reqs []model.Request) ([]model.Score, time.Duration, error) {
	var all []model.Score
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
func benchWorkload(requests, candidates int, seed uint64) []model.Request {
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
	out := make([]model.Request, requests)
	for i := range out {
		docs := make([]string, candidates)
		for j := range docs {
			docs[j] = names[rng.IntN(len(names))] + ": " + text(15+rng.IntN(50)) + "."
		}
		out[i] = model.Request{Query: "When did " + names[rng.IntN(len(names))] + " " + text(8) + "?", Docs: docs}
	}
	return out
}
