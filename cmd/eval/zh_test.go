package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/benchmarks/zh"
	"github.com/rerankd/rerankd/lexical"
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

// TestZhModes runs every mode once in markdown: the gse modes prove that
// this binary links the segmenter (without it they fail to start).
func TestZhModes(t *testing.T) {
	for _, m := range lexical.CJKModes() {
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
