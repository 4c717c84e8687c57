package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSynthetic writes qrels of n questions (one relevant document
// each) and two runs: A ranks it at 5, B at 1 for every question but the
// last, where B ranks it at 2.
func writeSynthetic(t *testing.T, dir string, n int) (qrels, a, b string) {
	t.Helper()
	var q, ra, rb strings.Builder
	for i := range n {
		qid := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&q, "%s 0 rel 1\n", qid)
		for r := 1; r <= 5; r++ {
			docA := fmt.Sprintf("x%d", r)
			if r == 5 {
				docA = "rel"
			}
			fmt.Fprintf(&ra, "%s Q0 %s %d %d a\n", qid, docA, r, 10-r)
			docB := fmt.Sprintf("x%d", r)
			relAt := 1
			if i == n-1 {
				relAt = 2
			}
			if r == relAt {
				docB = "rel"
			}
			fmt.Fprintf(&rb, "%s Q0 %s %d %d b\n", qid, docB, r, 10-r)
		}
	}
	qrels, a, b = filepath.Join(dir, "qrels"), filepath.Join(dir, "a.run"), filepath.Join(dir, "b.run")
	for path, body := range map[string]string{qrels: q.String(), a: ra.String(), b: rb.String()} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return qrels, a, b
}

// TestCompareSignificance: a run better on every question is
// significantly better (randomization and t-test), with the exact mean
// differences; a run against itself differs by 0 with p 1; the chart is
// a PNG.
func TestCompareSignificance(t *testing.T) {
	dir := t.TempDir()
	qrels, a, b := writeSynthetic(t, dir, 20)
	chart := filepath.Join(dir, "c.png")
	var out, errb bytes.Buffer
	if code := run([]string{"compare", "--qrels", qrels, "--json", "--png", chart, a, b, a}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res compareResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || len(res.Runs[0].Tests) != 0 || len(res.Runs[1].Tests) != len(compareKeys) {
		t.Fatalf("runs %+v", res.Runs)
	}
	// A: MAP = 1/5 everywhere. B: 1 on 19 questions, 1/2 on one.
	wantB := (19 + 0.5) / 20
	if got := res.Runs[1].Sets["all"]["MAP"]; got < wantB-1e-12 || got > wantB+1e-12 {
		t.Errorf("B MAP %v, want %v", got, wantB)
	}
	for _, tt := range res.Runs[1].Tests {
		switch tt.Metric {
		case "MAP":
			if d := tt.Diff - (wantB - 0.2); d > 1e-12 || d < -1e-12 || tt.PRand == nil || *tt.PRand > 0.001 || *tt.PT > 1e-10 {
				t.Errorf("MAP test %+v", tt)
			}
		case "Recall@5", "Recall@10", "Recall@20":
			if tt.Diff != 0 || tt.PRand == nil || *tt.PRand != 1 || *tt.PT != 1 {
				t.Errorf("%s: both runs find every document: %+v", tt.Metric, tt)
			}
		}
	}
	for _, tt := range res.Runs[2].Tests {
		if tt.Diff != 0 || tt.PRand == nil || *tt.PRand != 1 {
			t.Errorf("A against itself: %+v", tt)
		}
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width < 100 {
		t.Errorf("chart: %+v %v", cfg, err)
	}
	// The markdown form marks the significant differences.
	out.Reset()
	if code := run([]string{"compare", "--qrels", qrels, a, b}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "†") {
		t.Errorf("markdown: exit %d\n%s", code, out.String())
	}
}

// TestCompareLocomo: runs of `eval locomo --run` are compared from their
// sidecars alone, per category; runs on other data are refused; bad
// command lines are usage errors.
func TestCompareLocomo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "bm25.txt"), filepath.Join(dir, "mmr.txt")
	for _, args := range [][]string{{"--run", a}, {"--run", b, "--pipeline", "bm25+mmr", "--ranking", "bm25"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"locomo", "--data", fixtures}, args...), &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"compare", "--json", a, b}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res compareResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sets) < 3 || res.Sets[0] != "all" || res.Runs[1].Info == nil || res.Runs[1].Info.Pipeline != "bm25+mmr" {
		t.Fatalf("sets %v, run B %+v", res.Sets, res.Runs[1].Info)
	}
	// The sidecar's numbers are eval locomo's.
	out.Reset()
	if code := run([]string{"locomo", "--data", fixtures, "--json"}, &out, &errb); code != exitOK {
		t.Fatal(errb.String())
	}
	var lr locomoResult
	if err := json.Unmarshal(out.Bytes(), &lr); err != nil {
		t.Fatal(err)
	}
	if got := res.Runs[0].Sets["all"]["MAP"]; got != lr.Summary.MAP {
		t.Errorf("compare MAP %v, eval locomo %v", got, lr.Summary.MAP)
	}

	// Another data set: not comparable.
	other := filepath.Join(dir, "other.txt")
	if code := run([]string{"locomo", "--data", filepath.Join(fixtures, "a1.json"), "--run", other}, &out, &errb); code != exitOK {
		t.Fatal(errb.String())
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", a, other}, exitFail, "different data"},
		{[]string{"compare", a}, exitUsage, "two run files"},
		{[]string{"compare", "--permutations", "0", a, b}, exitUsage, "--permutations"},
		{[]string{"compare", a, filepath.Join(dir, "missing.txt")}, exitFail, "missing.txt"},
	} {
		errb.Reset()
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d %q, want %d with %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}
