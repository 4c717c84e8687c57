package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
)

// cvGrids are the settings `eval locomo --cv NAME` chooses among, each a
// list of extra flags appended to the command line (later flags win). The
// first point of each grid is the current default, so a grid that cannot
// beat it on the training folds keeps it.
var cvGrids = map[string][]string{
	"bm25":  product(axis{"--k1", "1.2", "0.4", "0.6", "0.9", "1.5"}, axis{"--b", "0.75", "0.1", "0.2", "0.3", "0.5"}),
	"query": product(axis{"--query-words", "false", "true"}, axis{"--name-weight", "1", "0.5", "2"}),
	"expansion": append([]string{"--expand-terms=0"},
		product(axis{"--expand-docs", "3", "5", "10"}, axis{"--expand-terms", "5", "10", "20"}, axis{"--expand-weight", "0.2", "0.4"})...),
	"context": append([]string{"--context-window=0 --context-neighbour=0 --context-source=0"},
		product(axis{"--context-window", "1", "2", "3", "5"}, axis{"--context-neighbour", "0.1", "0.3", "0.5", "1"}, axis{"--context-source", "0", "0.2", "0.5"})...),
	// combined crosses the ranges each mechanism's own grid found useful
	// (chosen before running it, from the single-mechanism figures).
	"combined": product(axis{"--k1", "0.9", "0.6", "1.2"}, axis{"--b", "0.3", "0.1", "0.5"},
		axis{"--context-window", "2", "3"}, axis{"--context-neighbour", "0.5", "0.3"}, axis{"--context-source", "0.5", "1"},
		axis{"--expand-terms", "0", "20 --expand-docs=5 --expand-weight=0.4"}),
}

// axis is one flag of a grid and its values, the default first.
type axis []string

// product is every combination of one value per axis ("--k1=0.9
// --b=0.3", ...), in order, so the first point takes every axis's first
// value.
func product(axes ...axis) []string {
	out := []string{""}
	for _, a := range axes {
		var next []string
		for _, p := range out {
			for _, v := range a[1:] {
				next = append(next, strings.TrimSpace(p+" "+a[0]+"="+v))
			}
		}
		out = next
	}
	return out
}

func cvGridNames() []string {
	names := make([]string, 0, len(cvGrids))
	for n := range cvGrids {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// cvFold is one held-out conversation and the setting the others chose.
type cvFold struct {
	HeldOut  string  `json:"held_out"`
	Setting  string  `json:"setting"`
	TrainMAP float64 `json:"train_map"`
	TestMAP  float64 `json:"test_map"`
}

// cvResult is the --json output of `eval locomo --cv`.
type cvResult struct {
	Grid  string   `json:"grid"`
	Folds []cvFold `json:"folds"`
	// CrossValidated scores each conversation's questions with the
	// setting chosen on the other conversations: the figure to report.
	CrossValidated locomoResult `json:"cross_validated"`
	// InSample is the best setting on all conversations at once, and its
	// (optimistic) score; Default is the grid's first point.
	InSampleSetting string       `json:"in_sample_setting"`
	InSample        locomoResult `json:"in_sample"`
	Default         locomoResult `json:"default"`
}

// runLocomoCV runs every point of the job's grid over ds, then, for each
// conversation, picks the point with the best MAP over the other
// conversations' questions and scores it on the held-out one (leave one
// conversation out). Only the held-out scores make the reported figure.
func runLocomoCV(args []string, job locomoJob, ds *locomo.Dataset, stdout, stderr io.Writer) int {
	start := time.Now()
	grid := cvGrids[job.cv]
	qrels := metrics.Qrels(ds.Qrels(job.unit))
	runs := make([]metrics.Run, len(grid))
	// per[i][qid] is point i's AP on question qid.
	per := make([]map[string]float64, len(grid))
	var category map[string]locomo.Category
	for i, point := range grid {
		pj, code, ok := parseLocomo(append(slices.Clone(args), strings.Fields(point)...), stderr)
		if !ok {
			fmt.Fprintf(stderr, "eval locomo: --cv %s: point %q does not parse\n", job.cv, point)
			return code
		}
		run, cat, code := pj.execute(ds, qrels, io.Discard)
		if code != exitOK {
			return code
		}
		_, pq, err := metrics.Evaluate(qrels, run)
		if err != nil {
			fmt.Fprintf(stderr, "eval locomo: %v\n", err)
			return exitFail
		}
		runs[i], category, per[i] = run, cat, map[string]float64{}
		for _, q := range pq {
			per[i][q.QID] = q.MAP
		}
		fmt.Fprintf(stderr, "cv %s: point %d/%d %q done\n", job.cv, i+1, len(grid), point)
	}
	convOf := func(qid string) string { c, _, _ := strings.Cut(qid, "/"); return c }
	meanMAP := func(i int, keep func(conv string) bool) float64 {
		var sum float64
		n := 0
		for qid := range qrels {
			if keep(convOf(qid)) {
				sum += per[i][qid]
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	best := func(keep func(string) bool) (int, float64) {
		bi, bm := 0, -1.0
		for i := range grid {
			if m := meanMAP(i, keep); m > bm+1e-12 {
				bi, bm = i, m
			}
		}
		return bi, bm
	}
	res := cvResult{Grid: job.cv}
	cvRun := metrics.Run{}
	for _, c := range ds.Conversations {
		held := c.ID
		i, train := best(func(conv string) bool { return conv != held })
		res.Folds = append(res.Folds, cvFold{HeldOut: held, Setting: grid[i], TrainMAP: train,
			TestMAP: meanMAP(i, func(conv string) bool { return conv == held })})
		for qid, ranked := range runs[i] {
			if convOf(qid) == held {
				cvRun[qid] = ranked
			}
		}
	}
	name := pipelineName(job.spec) + " --cv " + job.cv
	var err error
	if res.CrossValidated, err = summarise(name+" (cross-validated)", job.unit, qrels, cvRun, category); err != nil {
		fmt.Fprintf(stderr, "eval locomo: %v\n", err)
		return exitFail
	}
	bi, _ := best(func(string) bool { return true })
	res.InSampleSetting = grid[bi]
	if res.InSample, err = summarise(name+" in-sample "+grid[bi], job.unit, qrels, runs[bi], category); err != nil {
		fmt.Fprintf(stderr, "eval locomo: %v\n", err)
		return exitFail
	}
	if res.Default, err = summarise(name+" first point "+grid[0], job.unit, qrels, runs[0], category); err != nil {
		fmt.Fprintf(stderr, "eval locomo: %v\n", err)
		return exitFail
	}
	secs := time.Since(start).Seconds()
	res.CrossValidated.Seconds, res.InSample.Seconds, res.Default.Seconds = secs, secs, secs
	if job.asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return exitFail
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "grid %s (%d points), leave one conversation out\n\n| held out | chosen on the others | train MAP | held-out MAP |\n|---|---|---|---|\n", job.cv, len(grid))
	for _, f := range res.Folds {
		fmt.Fprintf(stdout, "| %s | `%s` | %.4f | %.4f |\n", f.HeldOut, f.Setting, f.TrainMAP, f.TestMAP)
	}
	fmt.Fprintln(stdout)
	printLocomoTable(stdout, res.CrossValidated)
	fmt.Fprintln(stdout)
	printLocomoTable(stdout, res.InSample)
	fmt.Fprintln(stdout)
	printLocomoTable(stdout, res.Default)
	return exitOK
}
