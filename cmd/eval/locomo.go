package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/post"
)

// locomoResult is the --json output of `eval locomo`.
type locomoResult struct {
	Pipeline    string                     `json:"pipeline"`
	Unit        string                     `json:"unit"`
	Seconds     float64                    `json:"seconds"`
	Summary     metrics.Summary            `json:"summary"`
	PerCategory map[string]metrics.Summary `json:"per_category"`
	// Recall100 is Recall@100, the ceiling of a reranker of the top 100
	// (outside the metrics package's fixed key set), overall and per
	// category.
	Recall100            float64            `json:"recall@100"`
	Recall100PerCategory map[string]float64 `json:"recall@100_per_category"`
	// Run describes the run (the --run file's sidecar).
	Run *runInfo `json:"run,omitempty"`
	// BeyondDepth lists the metrics whose cut-off is past the documents
	// the run holds per question (Run.Deepest): they equal the metric at
	// that depth.
	BeyondDepth []string `json:"beyond_depth,omitempty"`
	// Served counts the served stages' traffic (absent in process).
	Served *servedCounts `json:"served,omitempty"`
}

// servedCounts is what the served stages sent (cache hits excluded).
type servedCounts struct {
	RerankRequests int64 `json:"rerank_requests"`
	RerankPairs    int64 `json:"rerank_pairs"`
	EmbedRequests  int64 `json:"embed_requests"`
	EmbedTexts     int64 `json:"embed_texts"`
	Retried        int64 `json:"retried"`
	CacheHits      int64 `json:"cache_hits"`
	CacheMisses    int64 `json:"cache_misses"`
}

// locomoJob is a parsed `eval locomo` command line.
type locomoJob struct {
	data, runOut, qrelsOut string
	asJSON                 bool
	cv                     string
	spec                   pipelineSpec
	po                     pipelineOptions
	unit                   locomo.Unit
}

// runLocomo implements `eval locomo`: retrieval over each conversation's
// memories for each of its questions, scored against the evidence.
func runLocomo(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	job, err := parseLocomo(args, stderr)
	if err != nil {
		return err
	}
	ds, err := locomo.Load(job.data)
	if err != nil {
		return err
	}
	if job.cv != "" {
		return runLocomoCV(args, job, ds, stdout, stderr)
	}
	start := time.Now()
	qrels := metrics.Qrels(ds.Qrels(job.unit))
	ex, err := job.executeDescribed(ds, qrels, stderr)
	if err != nil {
		return err
	}
	run, category := ex.run, ex.category
	elapsed := time.Since(start).Seconds()
	if err := writeTREC(job.runOut, func(w io.Writer) error { return metrics.WriteRun(w, run, "rerankd") }); err != nil {
		return err
	}
	if job.runOut != "" {
		if err := writeSidecar(job.runOut, ex.info); err != nil {
			return err
		}
	}
	if err := writeTREC(job.qrelsOut, func(w io.Writer) error { return metrics.WriteQrels(w, qrels) }); err != nil {
		return err
	}
	res, err := summarise(pipelineName(job.spec), job.unit, qrels, run, category)
	if err != nil {
		return err
	}
	res.Seconds = elapsed
	res.Run, res.BeyondDepth, res.Served = &ex.info, beyondDepth(ex.info.Deepest), ex.served
	if job.asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	printLocomoTable(stdout, res)
	return nil
}

// summarise scores run overall and per category.
func summarise(pipeline string, unit locomo.Unit, qrels metrics.Qrels, run metrics.Run, category map[string]locomo.Category) (locomoResult, error) {
	res := locomoResult{Pipeline: pipeline, Unit: unit.String(), PerCategory: map[string]metrics.Summary{},
		Recall100PerCategory: map[string]float64{}}
	var err error
	if res.Summary, _, err = metrics.Evaluate(qrels, run); err != nil {
		return res, err
	}
	res.Recall100 = recallAt(qrels, run, 100)
	for _, c := range locomo.Categories() {
		sub := metrics.Qrels{}
		for qid, rel := range qrels {
			if category[qid] == c {
				sub[qid] = rel
			}
		}
		if len(sub) == 0 {
			continue
		}
		if res.PerCategory[c.String()], _, err = metrics.Evaluate(sub, run); err != nil {
			return res, err
		}
		res.Recall100PerCategory[c.String()] = recallAt(sub, run, 100)
	}
	return res, nil
}

// parseLocomo reads the command line. stderr gets the flag package's
// messages (and -h's flag list).
func parseLocomo(args []string, stderr io.Writer) (locomoJob, error) {
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "LoCoMo directory (per-conversation files) or locomo10.json (required)")
	pipeline := fs.String("pipeline", "bm25", "bm25, dense or hybrid, plus any of +rerank, +recency, +mmr (e.g. hybrid+rerank+mmr)")
	unitName := fs.String("unit", "turn", "retrieval unit: turn, session, observation or summary")
	depth := fs.Int("depth", 100, "documents kept per query in the run")
	rankingName := fs.String("ranking", lexrank.RankingDefault, "lexical ranking to start from: default (the cross-validated choice) or bm25 (plain BM25); the flags below override its fields")
	ranking := rankingFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object (summary keys plus per_category)")
	runOut := fs.String("run", "", "also write the TREC run to this file")
	qrelsOut := fs.String("qrels", "", "also write the TREC qrels (evidence) to this file")
	cv := fs.String("cv", "", "cross-validate a grid, leave one conversation out: "+strings.Join(cvGridNames(), ", "))
	po := pipelineOptions{fusion: post.DefaultFusionConfig(), recency: post.DefaultRecencyConfig(), mmr: post.DefaultMMRConfig()}
	fs.StringVar(&po.model, "model", "", "reranker model folder (the rerank stage)")
	fs.StringVar(&po.embedModel, "embed-model", "", "Qwen3-Embedding-style ONNX folder (dense and hybrid)")
	fs.StringVar(&po.ortLib, "ort-lib", "", "ONNX Runtime library (default: ORT_LIB or the one setup installs; setup-gpu's for a GPU provider)")
	po.dev = device.Define(fs)
	fs.StringVar(&po.tokenizer, "tokenizer", "", "tokenizer for model folders without one (default: the Qwen3 files setup installs)")
	fs.IntVar(&po.rerankDepth, "rerank-depth", defaultRerankDepth, "retrieved candidates reranked per question (the run keeps only these; /v1/search's default)")
	served := servedFlags(fs)
	fusion := fs.String("fusion", string(post.WeightedSum), "hybrid fusion: weighted_sum or rrf")
	fs.Float64Var(&po.fusion.VectorWeight, "vector-weight", po.fusion.VectorWeight, "weighted_sum: weight of the vector score")
	fs.Float64Var(&po.fusion.BM25Weight, "bm25-weight", po.fusion.BM25Weight, "weighted_sum: weight of the BM25 score")
	fs.Float64Var(&po.recency.Weight, "recency-weight", po.recency.Weight, "recency: share of the score given to recency")
	fs.DurationVar(&po.recency.HalfLife, "half-life", po.recency.HalfLife, "recency: age at which recency is 0.5")
	fs.Float64Var(&po.mmr.Lambda, "mmr-lambda", po.mmr.Lambda, "mmr: relevance vs diversity (1: relevance only)")
	fs.IntVar(&po.mmr.Window, "mmr-window", po.mmr.Window, "mmr: candidates it reorders")
	if err := fs.Parse(args); err != nil {
		return locomoJob{}, parseError(err)
	}
	usageErr := func(format string, a ...any) (locomoJob, error) {
		return locomoJob{}, cli.Usagef(format, a...)
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case *data == "":
		return usageErr("--data is required")
	case *depth < 1:
		return usageErr("--depth must be >= 1")
	case po.rerankDepth < 1:
		return usageErr("--rerank-depth must be >= 1")
	case po.model != "" && served.rerankURL != "":
		return usageErr("--model and --rerank-url: give one reranker")
	case po.embedModel != "" && served.embedURL != "":
		return usageErr("--embed-model and --embed-url: give one embedder")
	}
	if err := served.validate(); err != nil {
		return usageErr("%v", err)
	}
	po.served = *served
	if *cv != "" {
		if _, known := cvGrids[*cv]; !known {
			return usageErr("--cv %q: want one of %s", *cv, strings.Join(cvGridNames(), ", "))
		}
	}
	spec, err := parsePipeline(*pipeline)
	if err != nil {
		return usageErr("%v", err)
	}
	// A served stage the pipeline does not run would leave a run that
	// looks reranked (or embedded) and is not.
	switch {
	case served.rerankURL != "" && !spec.rerank:
		return usageErr("--rerank-url: pipeline %s has no rerank stage (add +rerank)", pipelineName(spec))
	case served.embedURL != "" && !spec.needsEmbedder():
		return usageErr("--embed-url: pipeline %s embeds nothing (use dense or hybrid)", pipelineName(spec))
	}
	po.depth, po.fusion.Method = *depth, post.FusionMethod(*fusion)
	if err := errors.Join(
		flagNamed(po.fusion.Validate(), map[string]string{"method": "--fusion", "vector_weight": "--vector-weight", "bm25_weight": "--bm25-weight", "rrf_k": "--rrf-k"}),
		flagNamed(po.recency.Validate(), map[string]string{"weight": "--recency-weight", "half_life": "--half-life"}),
		flagNamed(po.mmr.Validate(), map[string]string{"lambda": "--mmr-lambda", "window": "--mmr-window"})); err != nil {
		return usageErr("%v", err)
	}
	defaultModelPaths(&po)
	unit, err := locomo.ParseUnit(*unitName)
	if err != nil {
		return usageErr("%v", err)
	}
	base, err := ranking(*rankingName)
	if err != nil {
		return usageErr("%v", err)
	}
	po.ranking = base
	return locomoJob{data: *data, runOut: *runOut, qrelsOut: *qrelsOut, asJSON: *asJSON, cv: *cv,
		spec: spec, po: po, unit: unit}, nil
}

// execute runs the job's pipeline over ds. Every pipeline, plain bm25
// included, runs through the retrieval service the server uses
// (TestServiceBM25MatchesDirect shows it ranks as the direct
// per-conversation BM25 of bm25Run does). stderr gets the progress.
func (j locomoJob) execute(ds *locomo.Dataset, qrels metrics.Qrels, stderr io.Writer) (metrics.Run, map[string]locomo.Category, error) {
	ex, err := j.executeDescribed(ds, qrels, stderr)
	return ex.run, ex.category, err
}

// executed is a job's outcome.
type executed struct {
	run      metrics.Run
	category map[string]locomo.Category
	info     runInfo
	served   *servedCounts // nil in process
}

// executeDescribed is execute, with the run's description and the served
// stages' counts.
func (j locomoJob) executeDescribed(ds *locomo.Dataset, qrels metrics.Qrels, stderr io.Writer) (executed, error) {
	m, err := openModels(j.spec, j.po)
	if err != nil {
		return executed{}, err
	}
	defer m.Close()
	info, err := j.describe(m)
	if err != nil {
		return executed{}, err
	}
	run, category, err := servicePipeline(context.Background(), ds, j.unit, j.spec, j.po, m, qrels, stderr)
	if err != nil {
		return executed{}, err
	}
	return executed{run: run, category: category, info: info, served: m.counts()}, nil
}

// counts returns the served stages' counts (nil when none is served).
func (m models) counts() *servedCounts {
	if m.remoteReranker == nil && m.remoteEmbedder == nil {
		return nil
	}
	var c servedCounts
	var retried int64
	if r := m.remoteReranker; r != nil {
		c.RerankRequests, c.RerankPairs, retried = r.Stats()
		c.Retried += retried
	}
	if e := m.remoteEmbedder; e != nil {
		c.EmbedRequests, c.EmbedTexts, retried = e.Stats()
		c.Retried += retried
	}
	if m.cache != nil {
		c.CacheHits, c.CacheMisses = m.cache.Stats()
	}
	return &c
}

// bm25Run ranks each conversation's memories for each of its judged
// questions with per-request BM25: the direct computation the memory service's
// plain-BM25 ranking is checked against (TestServiceBM25MatchesDirect), and
// the candidates of the model calibration test. LoCoMo retrieval is per
// conversation: a question never sees another conversation's memories.
func bm25Run(ds *locomo.Dataset, unit locomo.Unit, s *lexical.Scorer, depth int, qrels metrics.Qrels, stderr io.Writer) (metrics.Run, map[string]locomo.Category) {
	run := metrics.Run{}
	category := map[string]locomo.Category{}
	bar := progress.New(stderr, int64(len(qrels)), "bm25", progress.Items)
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		mems := conv.Memories(unit)
		texts := make([]string, len(mems))
		for j, m := range mems {
			texts[j] = m.Text
		}
		for _, q := range conv.Questions {
			if _, judged := qrels[q.ID]; !judged {
				continue
			}
			category[q.ID] = q.Category
			// Only memories sharing a term with the question are retrieved,
			// as with the memory service's inverted index.
			res := s.Score(q.Text, texts)
			ranked := make([]metrics.Ranked, 0, len(res))
			for j, r := range res {
				if r.Raw > 0 {
					ranked = append(ranked, metrics.Ranked{DocID: mems[j].DocID, Score: r.Raw})
				}
			}
			if sorted, err := metrics.Rank(q.ID, ranked); err == nil && len(sorted) > depth {
				ranked = sorted[:depth]
			}
			run[q.ID] = ranked
			bar.Add(1)
		}
	}
	return run, category
}

// writeTREC writes a file with write, unless path is empty.
func writeTREC(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close() // the write error is the one to report
		return err
	}
	return f.Close()
}

// printLocomoTable prints the run's description, then one row per set:
// MAP and MRR, then the metrics by cut-off. A cut-off past the documents
// the run holds is marked "*" and explained below the table.
func printLocomoTable(w io.Writer, r locomoResult) {
	if r.Run != nil {
		printRunInfo(w, *r.Run)
	} else {
		fmt.Fprintf(w, "pipeline %s, unit %s\n", r.Pipeline, r.Unit)
	}
	if s := r.Served; s != nil {
		fmt.Fprintf(w, "served: %d rerank requests (%d pairs), %d embedding requests (%d texts), %d retried; cache %d hits, %d misses\n",
			s.RerankRequests, s.RerankPairs, s.EmbedRequests, s.EmbedTexts, s.Retried, s.CacheHits, s.CacheMisses)
	}
	fmt.Fprintf(w, "%.2fs\n\n", r.Seconds)
	keys := tableKeys()
	heads := make([]string, len(keys))
	for i, k := range keys {
		heads[i] = k
		if slices.Contains(r.BeyondDepth, k) {
			heads[i] += "*"
		}
	}
	fmt.Fprintf(w, "| set | %s |\n|---|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(keys)))
	row := func(name string, s metrics.Summary, r100 float64) {
		var b strings.Builder
		raw, _ := json.Marshal(s)
		var m map[string]float64
		_ = json.Unmarshal(raw, &m)
		m[recall100Key] = r100
		for _, k := range keys {
			if k == metrics.QueriesKey {
				fmt.Fprintf(&b, " %d |", int(m[k]))
			} else {
				fmt.Fprintf(&b, " %.4f |", m[k])
			}
		}
		fmt.Fprintf(w, "| %s |%s\n", name, b.String())
	}
	row("all", r.Summary, r.Recall100)
	for _, c := range locomo.Categories() {
		if s, ok := r.PerCategory[c.String()]; ok {
			row(c.String(), s, r.Recall100PerCategory[c.String()])
		}
	}
	if len(r.BeyondDepth) > 0 && r.Run != nil {
		why := fmt.Sprintf("--depth %d", r.Run.Depth)
		if r.Run.RerankDepth > 0 && r.Run.RerankDepth < r.Run.Depth {
			why = fmt.Sprintf("the rerank depth %d", r.Run.RerankDepth)
		}
		fmt.Fprintf(w, "\n* past %s: the run holds at most %d documents per question, so these equal the value at %d.\n",
			why, r.Run.Deepest, r.Run.Deepest)
	}
}

// flagNamed rewrites each of the problems in err (one, or several joined)
// that starts with a configuration field's name to start with the flag
// that sets it: "half_life -1h: want ..." becomes "--half-life -1h: want ...".
func flagNamed(err error, flags map[string]string) error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		msg := e.Error()
		field, rest, _ := strings.Cut(msg, " ")
		if flag, ok := flags[field]; ok {
			msg = flag + " " + rest
		} else if f, r, ok := strings.Cut(msg, " and "); ok && flags[f] != "" {
			// "vector_weight and bm25_weight must not both be 0"
			g, r2, _ := strings.Cut(r, " ")
			if flags[g] != "" {
				msg = flags[f] + " and " + flags[g] + " " + r2
			}
		}
		out[i] = errors.New(msg)
	}
	return errors.Join(out...)
}
