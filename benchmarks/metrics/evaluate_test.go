package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

const tol = 1e-12

// docs builds a run for one query; scores are given explicitly so each
// case states its own order. Rank is set to the listing position, which
// Evaluate must ignore.
func docs(pairs ...any) []Ranked {
	var out []Ranked
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Ranked{DocID: pairs[i].(string), Score: pairs[i+1].(float64), Rank: i/2 + 1})
	}
	return out
}

func TestEvaluate(t *testing.T) {
	// log2 values used below: log2(3) = 1.584962500721156, log2(5) = 2.321928094887362.
	tests := []struct {
		name  string
		qrels Qrels
		run   Run
		want  Summary
	}{
		{
			// numRel = 3 (d1, d2, d9); ranking d1, d3, d2 -> grades [1, 0, 1].
			// AP = (1/1 + 2/3) / 3 = 5/9. RR = 1. P@5 = 2/5.
			// Recall@1 = 1/3, Recall@5,10,20 = 2/3.
			// DCG = 1/log2(2) + 1/log2(4) = 1.5
			// IDCG = 1 + 1/log2(3) + 1/log2(4) = 2.1309297535714578
			// NDCG@5 = NDCG@10 = 0.7039180890341347
			name:  "simple",
			qrels: Qrels{"q1": {"d1": 1, "d2": 1, "d3": 0, "d9": 1}},
			run:   Run{"q1": docs("d1", 3.0, "d3", 2.0, "d2", 1.0)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: 5.0 / 9, MRR: 1, NDCG5: 0.7039180890341347, NDCG10: 0.7039180890341347,
				P5: 0.4, Recall1: 1.0 / 3, Recall5: 2.0 / 3, Recall10: 2.0 / 3, Recall20: 2.0 / 3,
			}},
		},
		{
			// a and b tie on score; docid descending puts b first -> grades [0, 1]
			// although the file lists a at rank 1. AP = (1/2)/1 = 0.5 (it would be 1
			// with ascending ties or with the file's ranks). RR = 0.5.
			// DCG = 1/log2(3) = 0.6309297535714575, IDCG = 1 -> NDCG = 0.6309297535714575.
			// P@5 = 1/5. Recall@1 = 0, Recall@5.. = 1.
			name:  "ties broken by docid descending",
			qrels: Qrels{"q1": {"a": 1, "b": 0}},
			run:   Run{"q1": docs("a", 1.0, "b", 1.0)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: 0.5, MRR: 0.5, NDCG5: 0.6309297535714575, NDCG10: 0.6309297535714575,
				P5: 0.2, Recall1: 0, Recall5: 1, Recall10: 1, Recall20: 1,
			}},
		},
		{
			// Two relevant documents, neither retrieved: every metric is 0.
			name:  "no relevant retrieved",
			qrels: Qrels{"q1": {"r1": 1, "r2": 2}},
			run:   Run{"q1": docs("x", 2.0, "y", 1.0)},
			want:  Summary{Queries: 1},
		},
		{
			// q1: a at rank 1 is its only relevant doc -> all 1 except P@5 = 1/5.
			// q2 is absent from the run -> all 0 (trec_eval -c).
			// Means over 2 queries: 0.5 each, P@5 = 0.1.
			name:  "qrels query missing from run counts as zero",
			qrels: Qrels{"q1": {"a": 1}, "q2": {"b": 1}},
			run:   Run{"q1": docs("a", 1.0)},
			want: Summary{Queries: 2, Scores: Scores{
				MAP: 0.5, MRR: 0.5, NDCG5: 0.5, NDCG10: 0.5,
				P5: 0.1, Recall1: 0.5, Recall5: 0.5, Recall10: 0.5, Recall20: 0.5,
			}},
		},
		{
			// Ranking c(1), a(3), x(unjudged), b(2) -> grades [1, 3, 0, 2]; d = 0 not retrieved.
			// DCG  = 1/log2(2) + 3/log2(3) + 0/log2(4) + 2/log2(5)
			//      = 1 + 1.8927892607143724 + 0 + 0.8613531161467861 = 3.7541423768611586
			// IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)   (grades 3, 2, 1; d's 0 adds nothing)
			//      = 3 + 1.261859507142915 + 0.5 = 4.7618595071429155
			// NDCG@5 = NDCG@10 = 0.7883773914853737
			// Binary metrics: relevant at ranks 1, 2, 4 of numRel = 3:
			// AP = (1/1 + 2/2 + 3/4)/3 = 11/12. RR = 1. P@5 = 3/5.
			// Recall@1 = 1/3, Recall@5.. = 1.
			name:  "graded relevance NDCG",
			qrels: Qrels{"q1": {"a": 3, "b": 2, "c": 1, "d": 0}},
			run:   Run{"q1": docs("c", 0.9, "a", 0.8, "x", 0.7, "b", 0.6)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: 11.0 / 12, MRR: 1, NDCG5: 0.7883773914853737, NDCG10: 0.7883773914853737,
				P5: 0.6, Recall1: 1.0 / 3, Recall5: 1, Recall10: 1, Recall20: 1,
			}},
		},
		{
			// Six relevant (grade 1) r1..r6 retrieved at ranks 2..7 behind unjudged n1.
			// DCG@5  = 1/log2(3) + 1/log2(4) + 1/log2(5) + 1/log2(6) = 1.9484591188793923
			// IDCG@5 = 1 + the same four terms                         = 2.9484591188793923
			// NDCG@5 = 0.6608397947263839
			// DCG@10  = DCG@5 + 1/log2(7) + 1/log2(8) = 2.637999639320748
			// IDCG@10 = IDCG@5 + 1/log2(7) (only six relevant) = 3.3046663059874146
			// NDCG@10 = 0.7982650576674577
			// AP = (1/2 + 2/3 + 3/4 + 4/5 + 5/6 + 6/7)/6 = 0.7345238095238096. RR = 1/2.
			// P@5 = 4/5. Recall@1 = 0, @5 = 4/6, @10 = @20 = 1.
			name:  "NDCG cut at k",
			qrels: Qrels{"q1": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "r5": 1, "r6": 1}},
			run: Run{"q1": docs("n1", 10.0, "r1", 9.0, "r2", 8.0, "r3", 7.0, "r4", 6.0,
				"r5", 5.0, "r6", 4.0)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: (1.0/2 + 2.0/3 + 3.0/4 + 4.0/5 + 5.0/6 + 6.0/7) / 6, MRR: 0.5,
				NDCG5: 0.6608397947263839, NDCG10: 0.7982650576674577,
				P5: 0.8, Recall1: 0, Recall5: 4.0 / 6, Recall10: 1, Recall20: 1,
			}},
		},
		{
			// Both relevant docs retrieved, nothing else: P@5 = 2/5 (not 2/2).
			// AP = (1/1 + 2/2)/2 = 1. RR = 1. NDCG = 1. Recall@1 = 1/2, @5.. = 1.
			name:  "P@5 with fewer than 5 retrieved",
			qrels: Qrels{"q1": {"a": 1, "b": 1}},
			run:   Run{"q1": docs("a", 2.0, "b", 1.0)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: 1, MRR: 1, NDCG5: 1, NDCG10: 1,
				P5: 0.4, Recall1: 0.5, Recall5: 1, Recall10: 1, Recall20: 1,
			}},
		},
		{
			// q2's judgments are all non-relevant (0 and -1). trec_eval 9.x still
			// evaluates it (scores 0) and counts it: queries = 2, so every mean is
			// q1's value / 2. q1: a at rank 1 -> 1 everywhere, P@5 = 1/5.
			name:  "query with only non-relevant judgments counts as zero",
			qrels: Qrels{"q1": {"a": 1}, "q2": {"b": 0, "c": -1}},
			run:   Run{"q1": docs("a", 1.0), "q2": docs("b", 2.0, "c", 1.0)},
			want: Summary{Queries: 2, Scores: Scores{
				MAP: 0.5, MRR: 0.5, NDCG5: 0.5, NDCG10: 0.5,
				P5: 0.1, Recall1: 0.5, Recall5: 0.5, Recall10: 0.5, Recall20: 0.5,
			}},
		},
		{
			// qX is only in the run and is ignored: queries = 1.
			// q1: x (unjudged) then a -> AP = 1/2, RR = 1/2, NDCG = 1/log2(3),
			// P@5 = 1/5, Recall@1 = 0, Recall@5.. = 1.
			name:  "run-only queries ignored",
			qrels: Qrels{"q1": {"a": 1}},
			run:   Run{"q1": docs("x", 2.0, "a", 1.0), "qX": docs("a", 1.0)},
			want: Summary{Queries: 1, Scores: Scores{
				MAP: 0.5, MRR: 0.5, NDCG5: 0.6309297535714575, NDCG10: 0.6309297535714575,
				P5: 0.2, Recall1: 0, Recall5: 1, Recall10: 1, Recall20: 1,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, per, err := Evaluate(tt.qrels, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			if got.Queries != tt.want.Queries || len(per) != tt.want.Queries {
				t.Fatalf("queries = %d (per-query %d), want %d", got.Queries, len(per), tt.want.Queries)
			}
			assertScores(t, got.Scores, tt.want.Scores)
		})
	}
}

func assertScores(t *testing.T, got, want Scores) {
	t.Helper()
	g, w := got.Values(), want.Values()
	for i, name := range MetricNames() {
		if math.Abs(g[i]-w[i]) > tol {
			t.Errorf("%s = %.17g, want %.17g", name, g[i], w[i])
		}
	}
}

func TestEvaluatePerQueryOrderAndValues(t *testing.T) {
	qrels := Qrels{"q2": {"a": 1}, "q10": {"b": 1}, "q1": {"c": 1}}
	run := Run{"q2": docs("a", 1.0)}
	_, per, err := Evaluate(qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	var qids []string
	for _, p := range per {
		qids = append(qids, p.QID)
	}
	// Byte order, as trec_eval sorts qids with strcmp.
	if want := []string{"q1", "q10", "q2"}; !slices.Equal(qids, want) {
		t.Fatalf("per-query order %v, want %v", qids, want)
	}
	if per[2].MAP != 1 || per[0].MAP != 0 || per[1].MAP != 0 {
		t.Fatalf("per-query MAP = %v %v %v, want 0 0 1", per[0].MAP, per[1].MAP, per[2].MAP)
	}
}

func TestEvaluateErrors(t *testing.T) {
	if _, _, err := Evaluate(Qrels{}, Run{"q": docs("a", 1.0)}); !errors.Is(err, ErrNoQueries) {
		t.Errorf("empty qrels: err = %v, want ErrNoQueries", err)
	}
	_, _, err := Evaluate(Qrels{"q1": {"a": 1}}, Run{"q1": docs("a", 2.0, "b", 1.0, "a", 0.5)})
	if err == nil || !strings.Contains(err.Error(), `"q1"`) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("duplicate doc: err = %v, want one naming query q1 and doc a", err)
	}
}

func TestRank(t *testing.T) {
	in := []Ranked{
		{DocID: "d10", Score: 1, Rank: 1},
		{DocID: "d9", Score: 1, Rank: 2},
		{DocID: "z", Score: 0.5, Rank: 3},
		{DocID: "a", Score: 2, Rank: 4},
		{DocID: "neg0", Score: math.Copysign(0, -1), Rank: 5},
		{DocID: "pos0", Score: 0, Rank: 6},
	}
	got, err := Rank("q", in)
	if err != nil {
		t.Fatal(err)
	}
	// a (2); then the tie at 1 by docid descending in byte order: "d9" > "d10";
	// z (0.5); -0 and 0 are equal scores, so "pos0" > "neg0".
	want := []string{"a", "d9", "d10", "z", "pos0", "neg0"}
	for i, d := range got {
		if d.DocID != want[i] || d.Rank != i+1 {
			t.Fatalf("position %d = %s rank %d, want %s rank %d", i, d.DocID, d.Rank, want[i], i+1)
		}
	}
	if in[0].DocID != "d10" || in[0].Rank != 1 {
		t.Error("Rank modified its input")
	}
}

func TestJSONKeys(t *testing.T) {
	b, err := json.Marshal(Summary{Queries: 3, Scores: Scores{MAP: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"MAP":0.25,"MRR":0,"NDCG@5":0,"NDCG@10":0,"P@5":0,"Recall@1":0,"Recall@5":0,"Recall@10":0,"Recall@20":0,"queries":3}`
	if string(b) != want {
		t.Errorf("summary JSON\n got %s\nwant %s", b, want)
	}
	if got := SummaryKeys(); !slices.Equal(got, []string{"MAP", "MRR", "NDCG@5", "NDCG@10", "P@5",
		"Recall@1", "Recall@5", "Recall@10", "Recall@20", "queries"}) {
		t.Errorf("SummaryKeys = %v", got)
	}
	b, err = json.Marshal(PerQuery{QID: `q"1`, Scores: Scores{MRR: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"qid":"q\"1","MAP":0,"MRR":1,"NDCG@5":0,"NDCG@10":0,"P@5":0,"Recall@1":0,"Recall@5":0,"Recall@10":0,"Recall@20":0}`
	if string(b) != want {
		t.Errorf("per-query JSON\n got %s\nwant %s", b, want)
	}
}
