package metrics

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
)

// metricNames is the fixed metric key set and its order. Other tooling
// parses these keys; change them only together with cmd/eval's contract.
var metricNames = []string{
	"MAP", "MRR", "NDCG@5", "NDCG@10", "P@5",
	"Recall@1", "Recall@5", "Recall@10", "Recall@20",
}

// QueriesKey is the Summary key holding the number of evaluated queries.
const QueriesKey = "queries"

// MetricNames returns the metric keys in their fixed order.
func MetricNames() []string { return slices.Clone(metricNames) }

// SummaryKeys returns exactly the keys of a Summary: MetricNames, then
// QueriesKey.
func SummaryKeys() []string { return append(MetricNames(), QueriesKey) }

// Scores holds one value per metric: a query's scores, or their means.
type Scores struct {
	MAP, MRR      float64
	NDCG5, NDCG10 float64
	P5            float64
	Recall1       float64
	Recall5       float64
	Recall10      float64
	Recall20      float64
}

// Values returns the scores in MetricNames order.
func (s Scores) Values() []float64 {
	return []float64{s.MAP, s.MRR, s.NDCG5, s.NDCG10, s.P5,
		s.Recall1, s.Recall5, s.Recall10, s.Recall20}
}

// Summary is the mean of each metric over the evaluated queries.
type Summary struct {
	Scores
	Queries int
}

// PerQuery is one evaluated query's scores.
type PerQuery struct {
	QID string
	Scores
}

// MarshalJSON writes one object with exactly SummaryKeys, in that order.
func (s Summary) MarshalJSON() ([]byte, error) {
	b := appendScores([]byte{'{'}, s.Scores)
	b = append(b, `,"queries":`...)
	q, _ := json.Marshal(s.Queries)
	b = append(b, q...)
	return append(b, '}'), nil
}

// MarshalJSON writes {"qid": ..., then the MetricNames keys in order}.
func (p PerQuery) MarshalJSON() ([]byte, error) {
	qid, err := json.Marshal(p.QID)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"qid":`), qid...)
	b = append(b, ',')
	b = appendScores(b, p.Scores)
	return append(b, '}'), nil
}

func appendScores(b []byte, s Scores) []byte {
	for i, v := range s.Values() {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(metricNames[i])
		f, _ := json.Marshal(v) // finite by construction
		b = append(append(append(b, k...), ':'), f...)
	}
	return b
}

// ErrNoQueries is returned by Evaluate when the qrels hold no query.
var ErrNoQueries = errors.New("no queries in the qrels")

// Evaluate scores run against qrels the way `trec_eval -c` does:
//
//   - every query in the qrels is evaluated, in byte order of its id; one
//     missing from the run scores 0 on every metric;
//   - queries only in the run are ignored;
//   - a qrels query whose judgments are all non-relevant (grade <= 0) is
//     evaluated too and scores 0, as in trec_eval 9.x (only versions before
//     8.1 skipped such queries);
//   - each query's documents are ordered by Rank;
//   - means are the per-query values summed in query order, divided by the
//     query count.
//
// The per-query results come back in the same order.
func Evaluate(qrels Qrels, run Run) (Summary, []PerQuery, error) {
	qids := sortedKeys(qrels)
	if len(qids) == 0 {
		return Summary{}, nil, ErrNoQueries
	}
	per := make([]PerQuery, 0, len(qids))
	sum := make([]float64, len(metricNames))
	for _, qid := range qids {
		s, err := scoreQuery(qid, qrels[qid], run[qid])
		if err != nil {
			return Summary{}, nil, err
		}
		per = append(per, PerQuery{QID: qid, Scores: s})
		for i, v := range s.Values() {
			sum[i] += v
		}
	}
	n := float64(len(qids))
	mean := Scores{
		MAP: sum[0] / n, MRR: sum[1] / n, NDCG5: sum[2] / n, NDCG10: sum[3] / n,
		P5: sum[4] / n, Recall1: sum[5] / n, Recall5: sum[6] / n,
		Recall10: sum[7] / n, Recall20: sum[8] / n,
	}
	return Summary{Scores: mean, Queries: len(qids)}, per, nil
}

func scoreQuery(qid string, judged map[string]int, docs []Ranked) (Scores, error) {
	ranked, err := Rank(qid, docs)
	if err != nil {
		return Scores{}, err
	}
	grades := make([]int, len(ranked))
	for i, d := range ranked {
		grades[i] = judged[d.DocID] // unjudged: 0
	}
	var ideal []int
	for _, g := range judged {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	slices.SortFunc(ideal, func(a, b int) int { return cmp.Compare(b, a) })
	numRel := len(ideal)
	return Scores{
		MAP:      averagePrecision(grades, numRel),
		MRR:      reciprocalRank(grades),
		NDCG5:    ndcgAt(grades, ideal, 5),
		NDCG10:   ndcgAt(grades, ideal, 10),
		P5:       precisionAt(grades, 5),
		Recall1:  recallAt(grades, 1, numRel),
		Recall5:  recallAt(grades, 5, numRel),
		Recall10: recallAt(grades, 10, numRel),
		Recall20: recallAt(grades, 20, numRel),
	}, nil
}
