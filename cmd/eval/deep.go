package main

import (
	"maps"
	"slices"

	"github.com/rerankd/rerankd/benchmarks/metrics"
)

// recallAt is the mean over the qrels' queries of the share of relevant
// documents in the run's top k (trec_eval's order; a query missing from
// the run scores 0). Recall@100 is what a reranker of the top 100 can
// reach at best, deeper than the metrics package's fixed set goes.
func recallAt(qrels metrics.Qrels, run metrics.Run, k int) float64 {
	if len(qrels) == 0 {
		return 0
	}
	var sum float64
	for _, qid := range slices.Sorted(maps.Keys(qrels)) { // a fixed sum order
		judged := qrels[qid]
		rel := 0
		for _, g := range judged {
			if g > 0 {
				rel++
			}
		}
		if rel == 0 {
			continue
		}
		ranked, err := metrics.Rank(qid, run[qid])
		if err != nil {
			continue // Evaluate has reported it already
		}
		found := 0
		for _, d := range ranked[:min(k, len(ranked))] {
			if judged[d.DocID] > 0 {
				found++
			}
		}
		sum += float64(found) / float64(rel)
	}
	return sum / float64(len(qrels))
}
