package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/post"
)

// locomoPairs labels the candidates of `eval locomo --pipeline bm25` with
// ranking rk (servicePipeline: the served search's memory service, same order, same
// progress bar) with the evidence, top depth per question; the group is
// the conversation. With served, a pair's score is what rerankd's lexical
// /rerank backend (no --model) returns for that memory as relevance_score,
// the mapped BM25 in (0, 1) that a threshold on /rerank applies to, which
// needs a second, silent scoring pass; otherwise it is the run's raw
// lexical score.
func locomoPairs(ds *locomo.Dataset, unit locomo.Unit, rk lexrank.Ranking, depth int, served bool, stderr io.Writer) ([]calibrate.Pair, error) {
	qrels := metrics.Qrels(ds.Qrels(unit))
	o := pipelineOptions{ranking: rk, depth: depth, fusion: post.DefaultFusionConfig()}
	run, _, err := servicePipeline(context.Background(), ds, unit, pipelineSpec{base: "bm25"}, o, models{}, qrels, stderr)
	if err != nil {
		return nil, err
	}
	backend := lexical.Default() // serve's lexical backend (cmd/rerankd serve without --model)
	var pairs []calibrate.Pair
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		var text map[string]string
		for _, q := range conv.Questions {
			ranked, ok := run[q.ID]
			if !ok {
				continue
			}
			score := func(j int) float64 { return ranked[j].Score }
			if served {
				if text == nil {
					text = map[string]string{}
					for _, m := range conv.Memories(unit) {
						text[m.DocID] = m.Text
					}
				}
				docs := make([]string, len(ranked))
				for j, r := range ranked {
					docs[j] = text[r.DocID]
				}
				res := backend.Score(q.Text, docs)
				score = func(j int) float64 { return res[j].Score }
			}
			for j, r := range ranked {
				pairs = append(pairs, calibrate.Pair{Score: score(j), Label: qrels[q.ID][r.DocID] > 0, Group: conv.ID})
			}
		}
	}
	return pairs, nil
}

// trecPairs labels the top-depth documents of each judged query of a TREC
// run with the qrels (grade > 0 is relevant). Queries absent from the qrels
// have no labels and are skipped; their number is returned. A query's group
// comes from groups when given (every judged query must be listed), else
// from its id: see queryGroup.
func trecPairs(run metrics.Run, qrels metrics.Qrels, groups map[string]string, depth int) (pairs []calibrate.Pair, unjudged int, err error) {
	for _, qid := range slices.Sorted(maps.Keys(run)) {
		judged, ok := qrels[qid]
		if !ok {
			unjudged++
			continue
		}
		ranked, err := metrics.Rank(qid, run[qid])
		if err != nil {
			return nil, 0, err
		}
		group := queryGroup(qid)
		if groups != nil {
			if group, ok = groups[qid]; !ok {
				return nil, 0, fmt.Errorf("query %q has no group in --groups", qid)
			}
		}
		for _, r := range ranked[:min(depth, len(ranked))] {
			pairs = append(pairs, calibrate.Pair{Score: r.Score, Label: judged[r.DocID] > 0, Group: group})
		}
	}
	return pairs, unjudged, nil
}

// queryGroup is the part of a qid before its first '/', ':' or '_' — the
// conversation of `eval locomo`'s "26/Q3" — or the whole qid, which makes
// each query its own group (leave one query out).
func queryGroup(qid string) string {
	if i := strings.IndexAny(qid, "/:_"); i > 0 {
		return qid[:i]
	}
	return qid
}

// readGroups reads "qid group" lines; blank lines and lines starting with
// '#' are skipped.
func readGroups(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want 2 fields \"qid group\", got %d", path, line, len(f))
		}
		if g, dup := out[f[0]]; dup && g != f[1] {
			return nil, fmt.Errorf("%s:%d: query %q already in group %q", path, line, f[0], g)
		}
		out[f[0]] = f[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// detectInput says how to read a run's scores when --input is auto: all in
// [0, 1] looks like a backend's probabilities.
func detectInput(pairs []calibrate.Pair) calibrate.Input {
	for _, p := range pairs {
		if !(p.Score >= 0 && p.Score <= 1) {
			return calibrate.InputReal
		}
	}
	return calibrate.InputProbability
}
