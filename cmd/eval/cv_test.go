package main

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
)

func TestProduct(t *testing.T) {
	got := product(axis{"--a", "1", "2"}, axis{"--b", "x", "y", "z"})
	want := []string{"--a=1 --b=x", "--a=1 --b=y", "--a=1 --b=z", "--a=2 --b=x", "--a=2 --b=y", "--a=2 --b=z"}
	if !slices.Equal(got, want) {
		t.Errorf("product = %q, want %q", got, want)
	}
}

// TestLocomoCV: on the two fixture conversations each fold is chosen on
// the other, the cross-validated run covers every judged question, and
// every grid parses.
func TestLocomoCV(t *testing.T) {
	for _, name := range cvGridNames() {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"locomo", "--data", fixtures, "--cv", name, "--json"}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var res cvResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Folds) != 2 {
				t.Fatalf("%d folds, want one per fixture conversation", len(res.Folds))
			}
			for _, f := range res.Folds {
				if !slices.Contains(cvGrids[name], f.Setting) {
					t.Errorf("fold %s chose %q, not a grid point", f.HeldOut, f.Setting)
				}
			}
			if res.CrossValidated.Summary.Queries != res.Default.Summary.Queries || res.Default.Summary.Queries == 0 {
				t.Errorf("cross-validated %d queries, default %d", res.CrossValidated.Summary.Queries, res.Default.Summary.Queries)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"locomo", "--data", fixtures, "--cv", "nope"}, &out, &errb); code != exitUsage {
		t.Errorf("unknown grid: exit %d, want %d", code, exitUsage)
	}
}

// TestCVSharedService: the grid's shared memory service (one store, each question
// searched once per ranking) gives every ranking the run that execute
// gives it alone.
func TestCVSharedService(t *testing.T) {
	ds, err := locomo.Load(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []locomoJob
	for _, point := range []string{"--ranking=bm25", "", "--field-speaker=1 --field-time=2 --expand-terms=5 --expand-docs=3 --expand-weight=0.4"} {
		j, err := parseLocomo(append([]string{"--data", fixtures}, strings.Fields(point)...), io.Discard)
		if err != nil {
			t.Fatalf("%q does not parse: %v", point, err)
		}
		jobs = append(jobs, j)
	}
	qrels := metrics.Qrels(ds.Qrels(jobs[0].unit))
	got := make([]metrics.Run, len(jobs))
	for i := range got {
		got[i] = metrics.Run{}
	}
	if _, err := cvRuns(jobs, ds, qrels, io.Discard, func(i int, qid string, ranked []metrics.Ranked) error {
		got[i][qid] = ranked
		return nil
	}); err != nil {
		t.Fatalf("cvRuns: %v", err)
	}
	for i, j := range jobs {
		want, _, err := j.execute(ds, qrels, io.Discard)
		if err != nil {
			t.Fatalf("execute: %v", err)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("ranking %+v: the shared memory service's run differs from execute's", j.po.ranking)
		}
	}
	if reflect.DeepEqual(got[0], got[2]) {
		t.Error("the rankings gave the same run: the test shows nothing")
	}
}
