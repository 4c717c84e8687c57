package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/graphflags"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/rerank"
)

// quantCheckResult is the JSON contract of `rerankd-bench quant-check`: each
// quantised variant's error against the folder's float32 graphs on the
// same requests, and its speed, timed in turn with the others.
type quantCheckResult struct {
	Model    string `json:"model"`
	Texts    string `json:"texts"` // the --texts file, or "generated" (bench's workload)
	Requests int    `json:"requests"`
	Pairs    int    `json:"pairs"`
	Rounds   int    `json:"rounds"`
	Threads  int    `json:"threads"`
	// SpeedBase is the variant the speed ratios divide by.
	SpeedBase string `json:"speed_base"`
	// FP32PairsPerS is the float32 reference, timed in turn with the
	// variants.
	FP32PairsPerS float64 `json:"fp32_pairs_per_s"`
	// RefLogitStd is the spread of the float32 logits: an error matters
	// relative to how far apart the scores are.
	RefLogitStd float64           `json:"ref_logit_std"`
	Variants    []variantAccuracy `json:"variants"`
	// Projections is --per-projection's measurement: each projection's
	// int8 product error on the first prompts' activations (reference
	// pass), per-row int8 and blocks of 32, per projection kind.
	Projections []projectionRow `json:"projections,omitempty"`
	Note        string          `json:"note"`
}

// variantAccuracy is one variant against float32 over the same pairs.
type variantAccuracy struct {
	Variant      string  `json:"variant"`
	MaxAbsLogit  float64 `json:"max_abs_logit_error"`
	MeanAbsLogit float64 `json:"mean_abs_logit_error"`
	MaxAbsScore  float64 `json:"max_abs_score_error"`
	MeanAbsScore float64 `json:"mean_abs_score_error"`
	// KendallTau is the mean over requests of Kendall's tau-a between the
	// variant's order and float32's; Top5Agree the share of requests whose
	// five best documents are the same set (all of them when fewer).
	KendallTau float64 `json:"mean_kendall_tau"`
	Top5Agree  float64 `json:"top5_same_set"`
	PairsPerS  float64 `json:"pairs_per_s"`
	// SpeedRatio is PairsPerS over SpeedBase's from the same rounds;
	// SpeedRatioMedian the median per request of SpeedBase's time over
	// this variant's (robust to a slow stretch on a shared machine).
	SpeedRatio       float64 `json:"speed_ratio"`
	SpeedRatioMedian float64 `json:"speed_ratio_median_per_request"`
}

// projectionRow is one projection kind's error over the layers.
type projectionRow struct {
	Kind         string  `json:"kind"`
	MeanInt8     float64 `json:"mean_relative_error_int8"`
	MaxInt8      float64 `json:"max_relative_error_int8"`
	MaxLayerInt8 int     `json:"max_layer_int8"`
	MeanBlock32  float64 `json:"mean_relative_error_block32"`
}

// textsRequest is one line of a --texts file.
type textsRequest struct {
	Query       string   `json:"query"`
	Documents   []string `json:"documents"`
	Instruction string   `json:"instruction,omitempty"`
}

// maxTextsBytes bounds a --texts file: it is read whole.
const maxTextsBytes = 64 << 20

// readTexts parses a --texts file: JSON lines of {"query": ..., "documents":
// [...], "instruction": ...}, blank lines skipped. Every problem is
// reported with its line number.
func readTexts(path string) ([]rerank.Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	data, err := io.ReadAll(io.LimitReader(f, maxTextsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTextsBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, maxTextsBytes>>20)
	}
	var reqs []rerank.Request
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), maxTextsBytes)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var r textsRequest
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			errs = append(errs, fmt.Errorf("line %d: want {\"query\": ..., \"documents\": [...]}: %w", line, err))
			continue
		}
		if dec.More() {
			errs = append(errs, fmt.Errorf("line %d: more than one JSON value", line))
			continue
		}
		if strings.TrimSpace(r.Query) == "" {
			errs = append(errs, fmt.Errorf("line %d: empty query", line))
		}
		if len(r.Documents) < 2 {
			errs = append(errs, fmt.Errorf("line %d: %d documents, want at least 2 (a ranking to compare)", line, len(r.Documents)))
		}
		for i, d := range r.Documents {
			if strings.TrimSpace(d) == "" {
				errs = append(errs, fmt.Errorf("line %d: document %d is empty", line, i))
			}
		}
		reqs = append(reqs, rerank.Request{Query: r.Query, Docs: r.Documents, Instruction: r.Instruction})
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", path, errors.Join(errs...))
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no requests (want JSON lines of {\"query\": ..., \"documents\": [...]})", path)
	}
	return reqs, nil
}

// runQuantCheck implements `rerankd-bench quant-check`: every quantised variant
// of a model folder against its float32 graphs on the same requests (the
// operator's own texts, or bench's generated dialog memories), with each
// variant's speed timed in turn with the others, request by request.
func runQuantCheck(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quant-check", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (required), with the quantised variants to check (testmodel/convert --quant)")
	texts := fs.String("texts", "", "JSON lines of {\"query\": ..., \"documents\": [...]} to score (default: generated dialog memories, as bench)")
	variants := fs.String("quant", "all", "variants to check, comma-separated, or all (every variant the folder has)")
	candidates := fs.Int("candidates", 20, "generated workload: documents per request")
	requests := fs.Int("requests", 5, "generated workload: requests")
	rounds := fs.Int("rounds", 1, "timed passes over the requests (each variant in turn per request; 0: errors only)")
	speedBase := fs.String("speed-base", "int8", "variant the speed ratios divide by: fp32 or a checked variant (by default int8, or fp32 when int8 is not checked)")
	seed := fs.Uint64("seed", 1, "generated workload seed")
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	perProj := fs.Int("per-projection", 0, "also measure every projection's int8 error on the activations of the first N prompts, "+
		"through the plain-Go reference pass (slow: ~1 min per 100 tokens at 0.6B; 0: skip)")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	dev := device.Define(fs)
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	var problems []string
	if *dir == "" {
		problems = append(problems, "--model required")
	}
	if *candidates < 2 || *requests < 1 {
		problems = append(problems, "--candidates must be >= 2 and --requests >= 1")
	}
	if *rounds < 0 || *threads < 0 || *perProj < 0 {
		problems = append(problems, "--rounds, --threads and --per-projection must be >= 0")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", errUsage, strings.Join(problems, "; "))
	}
	base, err := onnx.ParseQuant(*speedBase)
	if err != nil {
		return fmt.Errorf("%w: --speed-base: %w", errUsage, err)
	}
	if st, err := os.Stat(*dir); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("--model %s: not a folder", *dir)
	}
	qs, err := checkedVariants(*dir, *variants)
	if err != nil {
		return err
	}
	if base != onnx.QuantNone && !slices.Contains(qs, base) {
		base = onnx.QuantNone // the default base is absent: ratios against float32
		if explicitFlag(fs, "speed-base") {
			return fmt.Errorf("%w: --speed-base %s is not among the checked variants %v", errUsage, *speedBase, qs)
		}
	}
	var reqs []rerank.Request
	source := "generated"
	if *texts != "" {
		if reqs, err = readTexts(*texts); err != nil {
			return fmt.Errorf("--texts: %w", err)
		}
		source = *texts
	} else {
		reqs = benchWorkload(*requests, *candidates, *seed)
	}

	open := func(q onnx.Quant) (*rerank.Scorer, error) {
		o := model.DefaultOptions()
		o.RuntimeLib, o.Tokenizer, o.Session.IntraOpThreads, o.Quant = dev.ORTLib(*ortLib), *tok, *threads, q
		dev.Apply(&o.Session)
		s, _, err := model.Open(*dir, o)
		if err != nil {
			return nil, fmt.Errorf("open %v: %w", q, err)
		}
		return s, nil
	}
	kinds := append([]onnx.Quant{onnx.QuantNone}, qs...)
	scorers := make([]*rerank.Scorer, len(kinds))
	defer func() {
		for _, s := range scorers {
			if s != nil {
				_ = s.Close()
			}
		}
	}()
	for i, q := range kinds {
		if scorers[i], err = open(q); err != nil {
			return err
		}
	}
	ctx := context.Background()
	// Scores (untimed, the first pass also warms every session up).
	scores := make([][]rerank.Score, len(kinds))
	for i, s := range scorers {
		fmt.Fprintf(stderr, "scoring %d requests with %v...\n", len(reqs), kinds[i])
		if scores[i], _, err = timeRequests(ctx, s, reqs); err != nil {
			return fmt.Errorf("%v: %w", kinds[i], err)
		}
	}
	// Timing: per round and request, every variant in turn, the order
	// rotated so no variant always runs right after the same one.
	perReq := make([][]time.Duration, len(kinds))
	total := make([]time.Duration, len(kinds))
	for r := range *rounds {
		for j, req := range reqs {
			for k := range kinds {
				i := (k + r + j) % len(kinds)
				_, d, err := timeRequests(ctx, scorers[i], []rerank.Request{req})
				if err != nil {
					return fmt.Errorf("%v: %w", kinds[i], err)
				}
				perReq[i] = append(perReq[i], d)
				total[i] += d
			}
		}
	}
	res := quantCheckResult{Model: *dir, Texts: source, Requests: len(reqs), Pairs: len(scores[0]), Rounds: *rounds,
		Threads: *threads, SpeedBase: base.String(),
		Note: "errors against this folder's own float32 graphs on these texts; speeds measured in the same run, in turn, " +
			"on whatever else this machine runs meanwhile"}
	res.RefLogitStd = logitStd(scores[0])
	pairs := float64(res.Pairs * *rounds)
	if *rounds > 0 {
		res.FP32PairsPerS = pairs / total[0].Seconds()
	}
	baseIdx := slices.Index(kinds, base)
	for i := 1; i < len(kinds); i++ {
		v := accuracy(kinds[i].String(), scores[i], scores[0], reqs)
		if *rounds > 0 {
			v.PairsPerS = pairs / total[i].Seconds()
			v.SpeedRatio = total[baseIdx].Seconds() / total[i].Seconds()
			v.SpeedRatioMedian = medianRatio(perReq[baseIdx], perReq[i])
		}
		res.Variants = append(res.Variants, v)
	}
	if *perProj > 0 {
		prompts, err := scorers[0].Prompts(reqs[0])
		if err != nil {
			return err
		}
		for _, s := range scorers { // the reference pass needs the memory
			_ = s.Close()
		}
		scorers = nil
		fmt.Fprintf(stderr, "measuring every projection's error on %d prompts through the reference pass...\n", min(*perProj, len(prompts)))
		if res.Projections, err = projectionErrors(*dir, prompts[:min(*perProj, len(prompts))]); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	return printQuantCheck(stdout, res)
}

// projectionErrors reads the folder's float32 weights, runs prompts
// through the reference pass and returns each projection kind's int8
// error over the layers (onnx.ProjectionErrors).
func projectionErrors(dir string, prompts []rerank.Prompt) ([]projectionRow, error) {
	m, err := onnx.Load(dir)
	if err != nil {
		return nil, err
	}
	w, _, err := m.Weights()
	if err != nil {
		return nil, err
	}
	cal := &onnx.Calibration{}
	for _, p := range prompts {
		if err := ref.ProjectionInputs(w, p.IDs, cal.Add); err != nil {
			return nil, err
		}
	}
	perRow, err := onnx.ProjectionErrors(w, cal, onnx.QuantInt8)
	if err != nil {
		return nil, err
	}
	block, err := onnx.ProjectionErrors(w, cal, onnx.QuantInt8Block32)
	if err != nil {
		return nil, err
	}
	var rows []projectionRow
	at := map[string]int{}
	for i, e := range perRow {
		k, ok := at[e.Kind]
		if !ok {
			k = len(rows)
			at[e.Kind] = k
			rows = append(rows, projectionRow{Kind: e.Kind})
		}
		r := &rows[k]
		layers := float64(w.Config.NumHiddenLayers)
		r.MeanInt8 += e.RelErr / layers
		r.MeanBlock32 += block[i].RelErr / layers
		if e.RelErr > r.MaxInt8 {
			r.MaxInt8, r.MaxLayerInt8 = e.RelErr, e.Layer
		}
	}
	return rows, nil
}

// explicitFlag reports whether name was set on the command line.
func explicitFlag(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkedVariants resolves --quant against the folder: "all" is every
// variant whose plain graph the folder has (none is an error naming the
// command that writes them); a named one must parse and be present.
func checkedVariants(dir, list string) ([]onnx.Quant, error) {
	present := func(q onnx.Quant) bool {
		_, err := os.Stat(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, q)))
		return err == nil
	}
	var qs []onnx.Quant
	if list == "all" {
		for _, q := range onnx.Quants() {
			if present(q) {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 {
			return nil, fmt.Errorf("%s has no quantised variant: write them with `rerankd convert --quant %s` (or testmodel)",
				dir, graphflags.QuantList(onnx.Quants()))
		}
		return qs, nil
	}
	var errs []error
	for _, name := range strings.Split(list, ",") {
		q, err := onnx.ParseQuant(strings.TrimSpace(name))
		switch {
		case err != nil:
			errs = append(errs, err)
		case q == onnx.QuantNone:
			errs = append(errs, errors.New("fp32 is the reference, not a variant to check"))
		case !present(q):
			errs = append(errs, fmt.Errorf("%s has no %s: write it with `rerankd convert --quant %v` (or testmodel)",
				dir, onnx.QuantFile(onnx.ModelFile, q), q))
		case !slices.Contains(qs, q):
			qs = append(qs, q)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: --quant: %w", errUsage, errors.Join(errs...))
	}
	return qs, nil
}

// accuracy compares got with ref (the same pairs, request by request).
func accuracy(name string, got, ref []rerank.Score, reqs []rerank.Request) variantAccuracy {
	v := variantAccuracy{Variant: name}
	for i := range got {
		dl, ds := math.Abs(got[i].Logit-ref[i].Logit), math.Abs(got[i].Score-ref[i].Score)
		v.MaxAbsLogit, v.MaxAbsScore = max(v.MaxAbsLogit, dl), max(v.MaxAbsScore, ds)
		v.MeanAbsLogit += dl / float64(len(got))
		v.MeanAbsScore += ds / float64(len(got))
	}
	off := 0
	for _, r := range reqs {
		n := len(r.Docs)
		tau, top := rankAgreement(got[off:off+n], ref[off:off+n], n)
		v.KendallTau += tau / float64(len(reqs))
		v.Top5Agree += top / float64(len(reqs))
		off += n
	}
	return v
}

// logitStd is the standard deviation of the scores' logits.
func logitStd(s []rerank.Score) float64 {
	var sum, sq float64
	for _, x := range s {
		sum, sq = sum+x.Logit, sq+x.Logit*x.Logit
	}
	n := float64(len(s))
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0))
}

func printQuantCheck(w io.Writer, r quantCheckResult) error {
	fmt.Fprintf(w, "%s: %d requests, %d pairs (%s); float32 logit std %.3g", r.Model, r.Requests, r.Pairs, r.Texts, r.RefLogitStd)
	if r.Rounds > 0 {
		fmt.Fprintf(w, "; float32 %.2f pairs/s", r.FP32PairsPerS)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tmax|dlogit|\tmean|dlogit|\tmax|dscore|\tmean|dscore|\ttau\ttop5\tpairs/s\tvs %s\tmedian\t\n", r.SpeedBase)
	for _, v := range r.Variants {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.2e\t%.2e\t%.3f\t%.2f\t%.2f\t%.3f\t%.3f\t\n", v.Variant, v.MaxAbsLogit, v.MeanAbsLogit,
			v.MaxAbsScore, v.MeanAbsScore, v.KendallTau, v.Top5Agree, v.PairsPerS, v.SpeedRatio, v.SpeedRatioMedian)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Projections) > 0 {
		fmt.Fprintln(w, "projection int8 error on the reference pass's activations (relative RMS, mean over layers):")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "projection\tint8 mean\tint8 max\tat layer\tblock32 mean\t\n")
		for _, p := range r.Projections {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%d\t%.4f\t\n", p.Kind, p.MeanInt8, p.MaxInt8, p.MaxLayerInt8, p.MeanBlock32)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Note)
	return err
}
