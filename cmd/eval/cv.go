package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
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
	// fields weighs the speaker and time fields (BM25F); their length
	// normalisation is left at 0: on LoCoMo a speaker is one name and a
	// time always three terms, so b_f changes nothing there.
	"fields": product(axis{"--field-speaker", "0", "0.5", "1", "2", "4", "8"}, axis{"--field-time", "0", "1", "2", "4", "8"}),
	// combined crosses the ranges each mechanism's own grid found useful
	// (chosen before running it, from the single-mechanism figures; the
	// fields axes were added after the fields grid alone chose speaker 2
	// and time 2 to 8).
	"combined": product(axis{"--k1", "0.9", "0.6", "1.2"}, axis{"--b", "0.3", "0.1", "0.5"},
		axis{"--context-window", "2", "3"}, axis{"--context-neighbour", "0.5", "0.3"}, axis{"--context-source", "0.5", "1"},
		axis{"--expand-terms", "0", "20 --expand-docs=5 --expand-weight=0.4"},
		axis{"--field-speaker", "0", "1", "2", "4"}, axis{"--field-time", "0", "2", "4"}),
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
func runLocomoCV(args []string, job locomoJob, ds *locomo.Dataset, stdout, stderr io.Writer) error {
	start := time.Now()
	grid := cvGrids[job.cv]
	qrels := metrics.Qrels(ds.Qrels(job.unit))
	jobs := make([]locomoJob, len(grid))
	for i, point := range grid {
		pj, err := parseLocomo(append(slices.Clone(args), strings.Fields(point)...), stderr)
		if err != nil {
			return fmt.Errorf("--cv %s: point %q does not parse: %w", job.cv, point, err)
		}
		jobs[i] = pj
	}
	// Pass 1: every point's AP on every question. The rankings are not
	// kept: a large grid's would not fit in memory.
	qids := make([]string, 0, len(qrels))
	for qid := range qrels {
		qids = append(qids, qid)
	}
	slices.Sort(qids)
	index := make(map[string]int, len(qids))
	convOf := make([]string, len(qids))
	for k, qid := range qids {
		index[qid] = k
		convOf[k], _, _ = strings.Cut(qid, "/")
	}
	per := make([][]float64, len(grid)) // per[i][k]: point i's AP on question qids[k]
	for i := range per {
		per[i] = make([]float64, len(qids))
	}
	category, err := cvRuns(jobs, ds, qrels, stderr, func(i int, qid string, ranked []metrics.Ranked) error {
		_, pq, err := metrics.Evaluate(metrics.Qrels{qid: qrels[qid]}, metrics.Run{qid: ranked})
		if err == nil {
			per[i][index[qid]] = pq[0].MAP
		}
		return err
	})
	if err != nil {
		return err
	}
	meanMAP := func(i int, keep func(conv string) bool) float64 {
		var sum float64
		n := 0
		for k, ap := range per[i] {
			if keep(convOf[k]) {
				sum += ap
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
	chosen := make([]int, len(ds.Conversations))
	for ci, c := range ds.Conversations {
		held := c.ID
		i, train := best(func(conv string) bool { return conv != held })
		chosen[ci] = i
		res.Folds = append(res.Folds, cvFold{HeldOut: held, Setting: grid[i], TrainMAP: train,
			TestMAP: meanMAP(i, func(conv string) bool { return conv == held })})
	}
	bi, _ := best(func(string) bool { return true })

	// Pass 2: the rankings of the points the tables need.
	need := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(chosen), bi, 0))))
	sub := make([]locomoJob, len(need))
	runs := map[int]metrics.Run{}
	for k, i := range need {
		sub[k], runs[i] = jobs[i], metrics.Run{}
	}
	if _, err := cvRuns(sub, ds, qrels, stderr, func(k int, qid string, ranked []metrics.Ranked) error {
		runs[need[k]][qid] = ranked
		return nil
	}); err != nil {
		return err
	}
	cvRun := metrics.Run{}
	for ci, c := range ds.Conversations {
		for qid, ranked := range runs[chosen[ci]] {
			if convOf[index[qid]] == c.ID {
				cvRun[qid] = ranked
			}
		}
	}
	name := pipelineName(job.spec) + " --cv " + job.cv
	if res.CrossValidated, err = summarise(name+" (cross-validated)", job.unit, qrels, cvRun, category); err != nil {
		return err
	}
	res.InSampleSetting = grid[bi]
	if res.InSample, err = summarise(name+" in-sample "+grid[bi], job.unit, qrels, runs[bi], category); err != nil {
		return err
	}
	if res.Default, err = summarise(name+" first point "+grid[0], job.unit, qrels, runs[0], category); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	res.CrossValidated.Seconds, res.InSample.Seconds, res.Default.Seconds = secs, secs, secs
	if job.asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
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
	return nil
}

// cvRuns runs every job over ds and calls visit with each question's
// ranking under job i; it returns the questions' categories. Jobs that
// differ only in their ranking (every grid's points do) share one memory service:
// each conversation is stored and indexed once, and each question
// searched once per ranking, through the same searchOne as execute
// (TestCVSharedService: the same runs). Any other grid runs job by job.
func cvRuns(jobs []locomoJob, ds *locomo.Dataset, qrels metrics.Qrels, stderr io.Writer,
	visit func(i int, qid string, ranked []metrics.Ranked) error) (map[string]locomo.Category, error) {
	rankings := make([]lexrank.Ranking, len(jobs))
	shared := true
	for i, j := range jobs {
		rankings[i] = j.po.ranking
		j.po.ranking = jobs[0].po.ranking
		shared = shared && j == jobs[0]
	}
	if shared {
		return jobs[0].executeRankings(ds, qrels, rankings, visit, stderr)
	}
	var category map[string]locomo.Category
	for i, j := range jobs {
		run, cat, err := j.execute(ds, qrels, io.Discard) // one progress line per point, below
		if err != nil {
			return nil, err
		}
		for qid, ranked := range run {
			if err := visit(i, qid, ranked); err != nil {
				return nil, err
			}
		}
		category = cat
		fmt.Fprintf(stderr, "cv %s: point %d/%d done\n", j.cv, i+1, len(jobs))
	}
	return category, nil
}

// executeRankings is execute for several rankings at once, over one
// memory service (see cvRuns): visit gets each judged question's ranking under
// rankings[i].
func (j locomoJob) executeRankings(ds *locomo.Dataset, qrels metrics.Qrels, rankings []lexrank.Ranking,
	visit func(i int, qid string, ranked []metrics.Ranked) error, stderr io.Writer) (map[string]locomo.Category, error) {
	fail := func(err error) (map[string]locomo.Category, error) { return nil, err }
	m, err := openModels(j.spec, j.po)
	if err != nil {
		return fail(err)
	}
	defer m.Close()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rerankd-eval-cv-")
	if err != nil {
		return fail(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	st, err := bolt.Open(filepath.Join(dir, "eval.db"), bolt.Options{NoSync: true})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = st.Close() }()
	// The memory service servicePipeline makes (same configuration).
	cfg := retrieval.DefaultConfig()
	cfg.Fusion, cfg.Depth = j.po.fusion, j.po.depth
	e, err := retrieval.New(st, m.embedder, cfg)
	if err != nil {
		return fail(err)
	}
	e.Start()
	defer func() { _ = e.Close() }()
	if err := e.Wait(ctx); err != nil {
		return fail(err)
	}
	category := map[string]locomo.Category{}
	bar := progress.New(stderr, int64(len(qrels)), "cv "+j.cv, progress.Items)
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		ns := "conv-" + safeName(conv.ID)
		docIDs, now, err := ingest(ctx, e, ns, conv.Memories(j.unit), j.unit)
		if err != nil {
			return fail(fmt.Errorf("conversation %s: %w", conv.ID, err))
		}
		for _, q := range conv.Questions {
			if _, judged := qrels[q.ID]; !judged {
				continue
			}
			category[q.ID] = q.Category
			for r, rk := range rankings {
				o := j.po
				o.ranking = rk
				ranked, err := searchOne(ctx, e, ns, q.Text, j.spec, o, m, now)
				if err != nil {
					return fail(fmt.Errorf("question %s: %w", q.ID, err))
				}
				for k := range ranked {
					ranked[k].DocID = docIDs[ranked[k].DocID]
				}
				if err := visit(r, q.ID, ranked); err != nil {
					return fail(err)
				}
			}
			bar.Add(1)
		}
	}
	return category, nil
}
