package main

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/benchmarks/zh"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/lexrank"
)

// TestZh: the default mode runs on the embedded set, reports every tag,
// and its TREC files scored by `eval metrics` give the same summary.
func TestZh(t *testing.T) {
	dir := t.TempDir()
	runFile, qrelsFile := filepath.Join(dir, "run.txt"), filepath.Join(dir, "qrels.txt")
	var out, errb bytes.Buffer
	if code := run([]string{"zh", "--json", "--run", runFile, "--qrels", qrelsFile}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res struct {
		CJK     string                        `json:"cjk"`
		Summary map[string]float64            `json:"summary"`
		PerTag  map[string]map[string]float64 `json:"per_tag"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.CJK != string(lexical.DefaultCJK) {
		t.Errorf("cjk %q, want the default %q", res.CJK, lexical.DefaultCJK)
	}
	if res.Summary["queries"] < 50 || res.Summary["MAP"] <= 0 {
		t.Errorf("summary %v: want every query and some retrieval", res.Summary)
	}
	for _, tag := range zh.Tags() {
		if _, ok := res.PerTag[tag]; !ok {
			t.Errorf("per_tag lacks %s", tag)
		}
	}
	out.Reset()
	if code := run([]string{"metrics", "--qrels", qrelsFile, "--run", runFile, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("eval metrics: exit %d: %s", code, errb.String())
	}
	var again map[string]float64
	if err := json.Unmarshal(out.Bytes(), &again); err != nil {
		t.Fatal(err)
	}
	for k, v := range res.Summary {
		if again[k] != v {
			t.Errorf("%s: eval zh %v, eval metrics on its files %v", k, v, again[k])
		}
	}
}

// TestZhModes runs the default mode and one gse mode in markdown: the gse
// mode proves that this binary links the segmenter (without it, it fails
// to start). What each of the five modes makes of a text is lexical's
// TestCJKGolden; every mode name parses in TestParseCJKMode.
func TestZhModes(t *testing.T) {
	for _, m := range []lexical.CJKMode{lexical.DefaultCJK, lexical.CJKGse} {
		var out, errb bytes.Buffer
		if code := run([]string{"zh", "--cjk", string(m)}, &out, &errb); code != exitOK {
			t.Fatalf("--cjk %s: exit %d: %s", m, code, errb.String())
		}
		for _, want := range []string{"cjk " + string(m), "| set | MAP |", "| all |", "| traditional |"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("--cjk %s: output lacks %q:\n%s", m, want, out.String())
			}
		}
	}
}

func TestZhErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"zh", "--cjk", "trigram"}, exitUsage, "trigram"},
		{[]string{"zh", "--depth", "0"}, exitUsage, "--depth"},
		{[]string{"zh", "--k1", "-1"}, exitUsage, "k1 -1"},
		{[]string{"zh", "extra"}, exitUsage, "extra"},
		{[]string{"zh", "--run", "/nonexistent/run.txt"}, exitFail, "nonexistent"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d mentioning %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// TestZhService: through the memory service (served search), plain BM25 scores the
// set as the direct per-request scorer does; the rankings' flags apply
// there and are refused without it.
func TestZhService(t *testing.T) {
	summary := func(args ...string) map[string]float64 {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"zh", "--json"}, args...), &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var res struct {
			Pipeline string             `json:"pipeline"`
			Summary  map[string]float64 `json:"summary"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res.Summary
	}
	// The direct run lists every memory, those without a query term at
	// score 0 last; the memory service's lists the hits.
	ds, err := zh.Load()
	if err != nil {
		t.Fatal(err)
	}
	scorer, err := lexical.New(lexical.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	direct := zhRun(ds, scorer, len(ds.Memories)) // no cut: ties at a cut are broken differently
	an, err := lexical.NewAnalyzer(lexical.DefaultCJK)
	if err != nil {
		t.Fatal(err)
	}
	served, err := zhServiceRun(ds, an, lexrank.PlainBM25(), len(ds.Memories))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range ds.Queries {
		want := map[string]float64{}
		for _, r := range direct[q.ID] {
			if r.Score > 0 {
				want[r.DocID] = r.Score
			}
		}
		got := served[q.ID]
		if len(got) != len(want) {
			t.Errorf("%s: service %d hits, direct %d", q.ID, len(got), len(want))
			continue
		}
		for _, r := range got {
			if w, ok := want[r.DocID]; !ok || math.Abs(r.Score-w) > 1e-9 {
				t.Errorf("%s: service %s %v, direct %v (%v)", q.ID, r.DocID, r.Score, w, ok)
			}
		}
	}
	if s := summary("--ranking", "default", "--field-speaker", "2", "--field-time", "4", "--k1", "0.9"); s["MAP"] <= 0 {
		t.Errorf("default with fields: %v", s)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"zh", "--expand-terms", "5"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--ranking") {
		t.Errorf("expansion without --ranking: exit %d, %s", code, errb.String())
	}
}
