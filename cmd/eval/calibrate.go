package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/calibrate/plots"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/lexrank"
)

// calibrateResult is the --json output of `eval calibrate`.
type calibrateResult struct {
	Calibration *calibrate.Calibration `json:"calibration"`
	Folds       []calibrate.Fold       `json:"folds"`
	// Uncalibrated judges the raw scores as probabilities, held out the
	// same way (probability inputs only): what calibration improves on.
	Uncalibrated *calibrate.Metrics `json:"uncalibrated_held_out,omitempty"`
	Unjudged     int                `json:"unjudged_queries,omitempty"`
	Seconds      float64            `json:"seconds"`
	Out          string             `json:"out,omitempty"`
	Plots        []string           `json:"plots,omitempty"`
}

type calibrateFlags struct {
	data, unit, score                 string
	run, qrels, groups, input         string
	method, feature, rule, out, plots string
	ranking, modelID                  string
	depth, bins                       int
	json                              bool
}

// runCalibrate implements `eval calibrate`: (score, label) pairs from LoCoMo
// or a TREC run, a calibration fitted on all of them, its quality judged
// leave one group out, and optionally the calibration file and plots.
//
// Pairs: with --data, the candidates of `eval locomo --pipeline bm25`
// with the same --ranking and ranking flags, so the same default (progress
// bar on stderr), grouped by conversation, scored with the (0, 1) score of
// the lexical /rerank backend (input probability) or --score raw, the
// run's lexical score (input real). With --run/--qrels, the top --depth of each judged query;
// groups from --groups or the qid prefix (queryGroup); the scale is
// detected unless --input says it.
//
// Output: a readable summary, or with --json one object (calibrateResult:
// the calibration file's content, the folds, the uncalibrated baseline).
// Exit status 2 for usage errors, 1 for unreadable or unusable data
// (non-finite scores, fewer than two groups) and failed writes.
func runCalibrate(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f calibrateFlags
	fs.StringVar(&f.data, "data", "", "LoCoMo directory or locomo10.json: pairs from the bm25 pipeline, grouped by conversation")
	fs.StringVar(&f.unit, "unit", "turn", "with --data: retrieval unit (turn, session, observation, summary)")
	fs.StringVar(&f.score, "score", "served", "with --data: served (the (0, 1) score rerankd's lexical /rerank backend returns for each candidate) or raw (the lexical score of eval locomo's run)")
	fs.StringVar(&f.ranking, "ranking", lexrank.RankingDefault, "with --data: lexical ranking the candidates come from, as in eval locomo: default (the cross-validated choice) or bm25 (plain BM25); the ranking flags (--k1, --b, ...) override its fields")
	ranking := rankingFlags(fs)
	fs.StringVar(&f.run, "run", "", "TREC run `file` (instead of --data); needs --qrels")
	fs.StringVar(&f.modelID, "model-id", "", "the model whose scores these are, as rerankd serve's /info reports it (recorded in the file; serve refuses the file for another model); "+
		"default with --data: the lexical backend's")
	fs.StringVar(&f.qrels, "qrels", "", "TREC qrels `file` for --run")
	fs.StringVar(&f.groups, "groups", "", "with --run: `file` of \"qid group\" lines (default: qid up to its first '/', ':' or '_')")
	fs.StringVar(&f.input, "input", "auto", "with --run: score scale, probability, real, or auto (probability when all scores are in [0, 1])")
	fs.IntVar(&f.depth, "depth", 100, "candidates per query (top by score)")
	fs.StringVar(&f.method, "method", "platt", "platt, isotonic or identity")
	fs.StringVar(&f.feature, "feature", "", "platt regressor: logit or score (default logit for probability input, score for real)")
	fs.StringVar(&f.rule, "rule", "maxf1", "threshold rule: maxf1, youden or precision:T (e.g. precision:0.8)")
	fs.IntVar(&f.bins, "bins", 10, "bins for ECE and the reliability diagram")
	fs.StringVar(&f.out, "out", "", "write the calibration file here (JSON)")
	fs.StringVar(&f.plots, "plots", "", "write reliability, histogram and threshold PNGs into this `folder`")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of tables")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: eval calibrate (--data DIR | --run FILE --qrels FILE [--groups FILE]) [--method platt|isotonic|identity] [--rule maxf1|youden|precision:T] [--out FILE] [--plots DIR] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	usageErr := cli.Usagef
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case (f.data == "") == (f.run == ""):
		return usageErr("give exactly one of --data (LoCoMo) or --run (TREC run, with --qrels)")
	case f.run != "" && f.qrels == "":
		return usageErr("--run needs --qrels")
	case f.data != "" && (set["qrels"] || set["groups"] || set["input"]):
		return usageErr("--qrels, --groups and --input go with --run, not --data")
	case f.run != "" && (set["unit"] || set["score"] || set["ranking"] || rankingFlagSet(set)):
		return usageErr("--unit, --score, --ranking and the ranking flags (--k1, --b, ...) go with --data, not --run")
	case f.depth < 1:
		return usageErr("--depth must be >= 1")
	case f.score != "served" && f.score != "raw":
		return usageErr("--score %q: want served or raw", f.score)
	}
	cfg := calibrate.DefaultConfig()
	cfg.Bins = f.bins
	var err error
	if cfg.Method, err = calibrate.ParseMethod(f.method); err != nil {
		return usageErr("%v", err)
	}
	if cfg.Rule, err = calibrate.ParseRule(f.rule); err != nil || cfg.Rule.Kind == calibrate.RuleManual {
		return usageErr("--rule %q: want maxf1, youden or precision:T", f.rule)
	}
	if f.feature != "" && cfg.Method != calibrate.MethodPlatt {
		return usageErr("--feature is Platt's; method %s has none", cfg.Method)
	}
	// Everything the flags alone decide is checked before any file is
	// read: a typo must not cost a LoCoMo scoring pass first.
	if f.run != "" && f.input != "auto" && f.input != "probability" && f.input != "real" {
		return usageErr("--input %q: want auto, probability or real", f.input)
	}
	// The input scale of --run --input auto is known only after reading:
	// fail early only on what no scale would fix.
	scales := []calibrate.Input{calibrate.InputProbability}
	switch {
	case f.data != "" && f.score == "raw", f.run != "" && f.input == "real":
		scales = []calibrate.Input{calibrate.InputReal}
	case f.run != "" && f.input == "auto":
		scales = append(scales, calibrate.InputReal)
	}
	var earlyErr error
	for _, in := range scales {
		early := cfg
		early.Input, early.Feature = in, calibrate.FeatureLogit
		if in == calibrate.InputReal {
			early.Feature = calibrate.FeatureScore
		}
		if f.feature != "" {
			early.Feature = calibrate.Feature(f.feature)
		}
		if earlyErr = early.Validate(); earlyErr == nil {
			break
		}
	}
	if earlyErr != nil {
		return usageErr("%v", earlyErr)
	}

	start := time.Now()
	src := calibrate.Source{Created: start.UTC().Truncate(time.Second), Tool: toolVersion()}
	var pairs []calibrate.Pair
	unjudged := 0
	if f.data != "" {
		unit, err := locomo.ParseUnit(f.unit)
		if err != nil {
			return usageErr("%v", err)
		}
		rk, err := ranking(f.ranking)
		if err != nil {
			return usageErr("%v", err)
		}
		ds, err := locomo.Load(f.data)
		if err != nil {
			return err
		}
		cfg.Input = calibrate.InputProbability
		if f.score == "raw" {
			cfg.Input = calibrate.InputReal
		}
		src.Pipeline, src.Data, src.Unit, src.Depth = "bm25 --ranking "+f.ranking+" ("+f.score+" score)", f.data, unit.String(), f.depth
		src.Model = lexical.ModelID
		if pairs, err = locomoPairs(ds, unit, rk, f.depth, f.score == "served", stderr); err != nil {
			return err
		}
	} else {
		if pairs, unjudged, err = runPairs(f); err != nil {
			return err
		}
		switch f.input {
		case "auto":
			cfg.Input = detectInput(pairs)
		case "probability", "real":
			cfg.Input = calibrate.Input(f.input)
		default:
			return usageErr("--input %q: want auto, probability or real", f.input)
		}
		src.Pipeline, src.Data, src.Depth = "run", f.run+" + "+f.qrels, f.depth
	}
	cfg.Feature = calibrate.FeatureLogit
	if cfg.Input == calibrate.InputReal {
		cfg.Feature = calibrate.FeatureScore
	}
	if f.feature != "" {
		cfg.Feature = calibrate.Feature(f.feature)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}

	if f.modelID != "" {
		src.Model = f.modelID
	}
	cal, ev, err := calibrate.Calibrate(pairs, cfg, src)
	if err != nil {
		return err
	}
	if f.run != "" {
		// A run written by eval locomo names its models: one with random
		// weights gives scores whose calibration means nothing.
		info, ok, err := readSidecar(f.run)
		if err != nil {
			return err
		}
		if ok {
			for _, w := range info.randomWarnings() {
				cal.Notes = append(cal.Notes, w)
				fmt.Fprintf(stderr, "eval calibrate: WARNING: %s\n", w)
			}
		}
	}
	if err := cal.Degenerate(); err != nil {
		// Flagged loudly, in the file and here; rerankd serve refuses to
		// load such a file.
		note := fmt.Sprintf("%v: the scores do not separate relevant from irrelevant pairs; rerankd serve refuses this file", err)
		cal.Notes = append(cal.Notes, note)
		fmt.Fprintf(stderr, "eval calibrate: warning: %s\n", note)
	}
	res := calibrateResult{Calibration: cal, Folds: ev.Folds, Unjudged: unjudged, Out: f.out}
	if cfg.Input == calibrate.InputProbability && cfg.Method != calibrate.MethodIdentity {
		base := cfg
		base.Method = calibrate.MethodIdentity
		if bev, err := calibrate.LeaveOneGroupOut(pairs, base); err == nil {
			res.Uncalibrated = &bev.HeldOut
		}
	}
	if f.out != "" {
		if err := cal.Save(f.out); err != nil {
			return err
		}
	}
	if f.plots != "" {
		d := plots.Data{Title: plotTitle(cal), Scores: calibrate.Scores(pairs), Probs: ev.Probs, Labels: calibrate.Labels(pairs),
			ScoresAreProbabilities: cfg.Input == calibrate.InputProbability, Bins: cfg.Bins, Threshold: cal.Threshold, Rule: cal.Rule}
		if err := os.MkdirAll(f.plots, 0o755); err != nil {
			return err
		}
		if res.Plots, err = plots.WriteAll(d, f.plots); err != nil {
			return err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	if f.json {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	printCalibration(stdout, res)
	return nil
}

// runPairs reads --run, --qrels and --groups into pairs.
func runPairs(f calibrateFlags) ([]calibrate.Pair, int, error) {
	qrels, err := readFile(f.qrels, metrics.ReadQrels)
	if err != nil {
		return nil, 0, err
	}
	run, err := readFile(f.run, metrics.ReadRun)
	if err != nil {
		return nil, 0, err
	}
	var groups map[string]string
	if f.groups != "" {
		if groups, err = readGroups(f.groups); err != nil {
			return nil, 0, err
		}
	}
	pairs, unjudged, err := trecPairs(run, qrels, groups, f.depth)
	if err == nil && len(pairs) == 0 {
		err = fmt.Errorf("%s: no query of the run is judged in %s", f.run, f.qrels)
	}
	return pairs, unjudged, err
}

// toolVersion names this program and the commit it was built from, when
// the build recorded one.
func toolVersion() string {
	v := "rerankd eval calibrate"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return v + " " + info.Main.Version
	}
	if dirty {
		rev += "+dirty"
	}
	return v + " " + rev
}

func plotTitle(c *calibrate.Calibration) string {
	s := c.Source.Pipeline
	if c.Source.Unit != "" {
		s += ", unit " + c.Source.Unit
	}
	return fmt.Sprintf("%s, %s", s, c.Method)
}

func printCalibration(w io.Writer, r calibrateResult) {
	c := r.Calibration
	src := c.Source
	fmt.Fprintf(w, "%s on %s: %d pairs, %d relevant, %d groups; input %s", src.Pipeline, src.Data, src.Pairs, src.Positives, src.Groups, c.Input)
	if src.Unit != "" {
		fmt.Fprintf(w, ", unit %s", src.Unit)
	}
	fmt.Fprintf(w, ", depth %d", src.Depth)
	if r.Unjudged > 0 {
		fmt.Fprintf(w, " (%d unjudged queries skipped)", r.Unjudged)
	}
	fmt.Fprintf(w, "\nmethod %s", c.Method)
	switch {
	case c.Platt != nil:
		fmt.Fprintf(w, ": p = sigmoid(%.4f·%s %+.4f)", c.Platt.Slope, map[calibrate.Feature]string{calibrate.FeatureLogit: "logit(score)", calibrate.FeatureScore: "score"}[c.Platt.Feature], c.Platt.Intercept)
	case c.Isotonic != nil:
		fmt.Fprintf(w, ": %d knots", len(c.Isotonic.X))
	}
	fmt.Fprintf(w, "; rule %s: threshold %.4f (chosen on all pairs)\n\n", c.Rule, c.Threshold)
	fmt.Fprintln(w, "| judged on | precision | recall | F1 | kept | ECE | ECE (equal mass) | Brier |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	row := func(name string, m *calibrate.Metrics) {
		if m != nil {
			fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", name, m.Precision, m.Recall, m.F1, m.Kept, m.ECE, m.ECEMass, m.Brier)
		}
	}
	row("held out (leave one group out)", c.HeldOut)
	row("uncalibrated scores, held out", r.Uncalibrated)
	row("fitting data (optimistic)", c.InSample)
	fmt.Fprintln(w, "\n| held-out group | pairs | relevant | threshold | precision | recall | F1 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, f := range r.Folds {
		note := ""
		if !f.Reached {
			note = " (target not reached)"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.4f%s | %.4f | %.4f | %.4f |\n", f.Group, f.Pairs, f.Positives, f.Threshold, note, f.Precision, f.Recall, f.F1)
	}
	if len(c.Notes) > 0 {
		fmt.Fprintf(w, "\nnotes: %s\n", strings.Join(c.Notes, "; "))
	}
	fmt.Fprintf(w, "\n%.2fs", r.Seconds)
	if r.Out != "" {
		fmt.Fprintf(w, "; wrote %s", r.Out)
	}
	if len(r.Plots) > 0 {
		fmt.Fprintf(w, "; plots %s", strings.Join(r.Plots, ", "))
	}
	fmt.Fprintln(w)
}
