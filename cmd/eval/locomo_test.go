package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const fixtures = "../../benchmarks/locomo/testdata/flat"

// TestLocomoBM25: the pipeline runs on the synthetic fixtures, prints the
// contract keys, and its TREC run scored by `eval metrics` gives the same
// summary.
func TestLocomoBM25(t *testing.T) {
	runFile := filepath.Join(t.TempDir(), "run.txt")
	qrelsFile := filepath.Join(t.TempDir(), "qrels.txt")
	var out, errb bytes.Buffer
	if code := run([]string{"locomo", "--data", fixtures, "--json", "--run", runFile, "--qrels", qrelsFile}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	var summary map[string]float64
	if err := json.Unmarshal(res["summary"], &summary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"MAP", "NDCG@10", "MRR", "Recall@10", "queries"} {
		if _, ok := summary[k]; !ok {
			t.Errorf("summary lacks %s: %s", k, res["summary"])
		}
	}
	if summary["queries"] < 1 || summary["MAP"] <= 0 {
		t.Errorf("summary %v: want judged queries and some retrieval", summary)
	}
	if _, ok := res["per_category"]; !ok {
		t.Error("no per_category block")
	}
	// The written run, scored by `eval metrics` against the written qrels,
	// reproduces the summary.
	out.Reset()
	if code := run([]string{"metrics", "--qrels", qrelsFile, "--run", runFile, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("eval metrics: exit %d: %s", code, errb.String())
	}
	var again map[string]float64
	if err := json.Unmarshal(out.Bytes(), &again); err != nil {
		t.Fatal(err)
	}
	for k, v := range summary {
		if again[k] != v {
			t.Errorf("%s: eval locomo %v, eval metrics on its files %v", k, v, again[k])
		}
	}
}

func TestLocomoErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"locomo"}, exitUsage, "--data"},
		{[]string{"locomo", "--data", fixtures, "--pipeline", "hybrid+rerank"}, exitUsage, "--embed-model"},
		{[]string{"locomo", "--data", fixtures, "--unit", "word"}, exitUsage, "word"},
		{[]string{"locomo", "--data", fixtures, "--depth", "0"}, exitUsage, "--depth"},
		{[]string{"locomo", "--data", "/nonexistent"}, exitFail, "nonexistent"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d mentioning %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
