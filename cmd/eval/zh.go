package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/benchmarks/zh"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/lexical"
	_ "github.com/rerankd/rerankd/lexical/gse" // eval zh measures the gse modes, so it links the segmenter
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// zhResult is the --json output of `eval zh`: locomoResult's shape, with
// the query tags in place of LoCoMo's categories.
type zhResult struct {
	Pipeline string  `json:"pipeline"`
	CJK      string  `json:"cjk"`
	Seconds  float64 `json:"seconds"`
	// LoadSeconds is the time New took to load the CJK mode's dictionary
	// (0 for the modes without one).
	LoadSeconds float64                    `json:"load_seconds"`
	Summary     metrics.Summary            `json:"summary"`
	PerTag      map[string]metrics.Summary `json:"per_tag"`
	// Recall100 is Recall@100 (grade >= 1 relevant), overall and per tag,
	// as eval locomo reports it.
	Recall100       float64            `json:"recall@100"`
	Recall100PerTag map[string]float64 `json:"recall@100_per_tag"`
}

// runZh implements `eval zh`: BM25 over the Chinese test set of
// benchmarks/zh, scored against its judgments, per query tag.
func runZh(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval zh", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cjk := fs.String("cjk", string(lexical.DefaultCJK), "CJK analysis: "+joinModes())
	depth := fs.Int("depth", 100, "documents kept per query in the run")
	rankingName := fs.String("ranking", "", "search through retrieval.Service (served search) with this lexical ranking, default or bm25, and the flags below on top; empty: per-request BM25 (lexical.Scorer) with --k1 and --b (1.2 and 0.75 when not given)")
	ranking := rankingFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object (summary keys plus per_tag)")
	runOut := fs.String("run", "", "also write the TREC run to this file")
	qrelsOut := fs.String("qrels", "", "also write the TREC qrels to this file")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	usageErr := cli.Usagef
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case *depth < 1:
		return usageErr("--depth must be >= 1")
	}
	mode, err := lexical.ParseCJKMode(*cjk)
	if err != nil {
		return usageErr("%v", err)
	}
	ds, err := zh.Load()
	if err != nil {
		return err
	}
	var run metrics.Run
	var loaded, secs float64
	pipeline := "bm25"
	if *rankingName != "" {
		rk, err := ranking(*rankingName)
		if err != nil {
			return usageErr("%v", err)
		}
		loadStart := time.Now()
		an, err := lexical.NewAnalyzer(mode)
		if err != nil {
			return err
		}
		loaded = time.Since(loadStart).Seconds()
		start := time.Now()
		if run, err = zhServiceRun(ds, an, rk, *depth); err != nil {
			return err
		}
		secs, pipeline = time.Since(start).Seconds(), "service --ranking "+*rankingName
	} else {
		// The ranking flags' zero values stand for "not given"; here
		// only k1 and b apply, with lexical's defaults.
		cfg := lexical.DefaultConfig()
		cfg.CJK = mode
		var stages []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "k1" && f.Name != "b" && strings.Contains(rankingFlagNames, " "+f.Name+" ") {
				stages = append(stages, "--"+f.Name)
			}
		})
		if len(stages) > 0 {
			return usageErr("%s: a ranking stage, only with --ranking (through the memory service)", strings.Join(stages, ", "))
		}
		rk, err := ranking(lexrank.RankingBM25)
		if err != nil {
			return usageErr("%v", err)
		}
		cfg.K1, cfg.B = rk.K1, rk.B
		if err := cfg.Validate(); err != nil {
			return usageErr("%v", err)
		}
		loadStart := time.Now()
		scorer, err := lexical.New(cfg)
		if err != nil {
			return err
		}
		loaded = time.Since(loadStart).Seconds()
		start := time.Now()
		run = zhRun(ds, scorer, *depth)
		secs = time.Since(start).Seconds()
	}
	res := zhResult{Pipeline: pipeline, CJK: string(mode), Seconds: secs,
		LoadSeconds: loaded, PerTag: map[string]metrics.Summary{}, Recall100PerTag: map[string]float64{}}
	qrels := ds.Qrels()
	if err := writeTREC(*runOut, func(w io.Writer) error { return metrics.WriteRun(w, run, "rerankd") }); err != nil {
		return err
	}
	if err := writeTREC(*qrelsOut, func(w io.Writer) error { return metrics.WriteQrels(w, qrels) }); err != nil {
		return err
	}
	res.Recall100 = recallAt(qrels, run, 100)
	if res.Summary, _, err = metrics.Evaluate(qrels, run); err != nil {
		return err
	}
	for _, tag := range zh.Tags() {
		sub := ds.QrelsTagged(tag)
		if len(sub) == 0 {
			continue
		}
		res.Recall100PerTag[tag] = recallAt(sub, run, 100)
		if res.PerTag[tag], _, err = metrics.Evaluate(sub, run); err != nil {
			return err
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	printZhTable(stdout, res, len(ds.Memories))
	return nil
}

// zhRun ranks all memories for every query: the set is one user's memory,
// so every query searches all of it.
func zhRun(ds *zh.Dataset, s *lexical.Scorer, depth int) metrics.Run {
	texts := make([]string, len(ds.Memories))
	for i, m := range ds.Memories {
		texts[i] = m.Text
	}
	run := metrics.Run{}
	for _, q := range ds.Queries {
		res := s.Score(q.Text, texts)
		ranked := make([]metrics.Ranked, len(res))
		for i, r := range res {
			ranked[i] = metrics.Ranked{DocID: ds.Memories[i].ID, Score: r.Raw}
		}
		if sorted, err := metrics.Rank(q.ID, ranked); err == nil && len(sorted) > depth {
			ranked = sorted[:depth]
		}
		run[q.ID] = ranked
	}
	return run
}

// zhServiceRun searches every query through retrieval.Service, the served
// search, with ranking rk: the memories are one namespace of a throwaway
// store, each with its time and its speaker ("user" or "assistant") as
// metadata speaker; they have no source, so context has no neighbours.
func zhServiceRun(ds *zh.Dataset, an *lexical.Analyzer, rk lexrank.Ranking, depth int) (metrics.Run, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rerankd-eval-zh-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	st, err := bolt.Open(filepath.Join(dir, "zh.db"), bolt.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	cfg := retrieval.DefaultConfig()
	cfg.BM25.Analyzer, cfg.Depth = an, depth
	e, err := retrieval.New(st, nil, cfg)
	if err != nil {
		return nil, err
	}
	e.Start()
	defer func() { _ = e.Close() }()
	if err := e.Wait(ctx); err != nil {
		return nil, err
	}
	const ns = "zh"
	items := make([]store.Item, len(ds.Memories))
	for i, m := range ds.Memories {
		items[i] = store.Item{Memory: memory.Memory{Namespace: ns, ID: m.ID, Text: m.Text, Time: m.Time,
			Metadata: memory.Metadata{retrieval.DefaultSpeakerKey: memory.String(m.Speaker)}}}
	}
	if _, err := e.Add(ctx, items); err != nil {
		return nil, err
	}
	o := pipelineOptions{ranking: rk, depth: depth}
	run := metrics.Run{}
	for _, q := range ds.Queries {
		ranked, err := searchOne(ctx, e, ns, q.Text, pipelineSpec{base: "bm25"}, o, models{}, time.Time{})
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		run[q.ID] = ranked
	}
	return run, nil
}

func joinModes() string {
	var names []string
	for _, m := range lexical.CJKModes() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// printZhTable prints the markdown table of `eval locomo` (same columns,
// same number formats), with a row per query tag.
func printZhTable(w io.Writer, r zhResult, memories int) {
	keys := metrics.SummaryKeys()
	fmt.Fprintf(w, "pipeline %s, cjk %s, %d memories, %.2fs (dictionary load %.2fs)\n\n| set | %s | Recall@100 |\n|---|%s---|\n",
		r.Pipeline, r.CJK, memories, r.Seconds, r.LoadSeconds,
		strings.Join(keys, " | "), strings.Repeat("---|", len(keys)))
	row := func(name string, s metrics.Summary, r100 float64) {
		var b strings.Builder
		for _, v := range s.Values() {
			fmt.Fprintf(&b, " %.4f |", v)
		}
		fmt.Fprintf(w, "| %s |%s %d | %.4f |\n", name, b.String(), s.Queries, r100)
	}
	row("all", r.Summary, r.Recall100)
	for _, tag := range zh.Tags() {
		if s, ok := r.PerTag[tag]; ok {
			row(tag, s, r.Recall100PerTag[tag])
		}
	}
}
