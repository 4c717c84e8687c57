package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of benchmarks/locomo/README.md")

const readmePath = "../../benchmarks/locomo/README.md"

// readmeBlock replaces the text between "<!-- BEGIN generated: NAME -->"
// and "<!-- END generated: NAME -->" in readme with body; with -update it
// writes the file, otherwise it fails when the file differs: the page's
// figures are whatever these commands print today.
func readmeBlock(t *testing.T, name, body string) {
	t.Helper()
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- BEGIN generated: "+name+" -->", "<!-- END generated: "+name+" -->"
	re := regexp.MustCompile("(?s)" + regexp.QuoteMeta(begin) + ".*?" + regexp.QuoteMeta(end))
	if !re.Match(raw) {
		t.Fatalf("%s has no %q ... %q block", readmePath, begin, end)
	}
	block := begin + "\n<!-- made by `go test ./cmd/eval -run " + t.Name() + " -update`; do not edit -->\n" + body + end
	got := re.ReplaceAllLiteral(raw, []byte(block))
	if bytes.Equal(got, raw) {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: block %q is stale; rerun with -update. It should read:\n%s", readmePath, name, block)
}

// evalOut runs eval with args and returns its standard output. shown is
// the command as the page prints it.
func evalOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != exitOK {
		t.Fatalf("eval %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// tableOnly keeps the markdown table (and its footnote) of `eval locomo`'s
// output: the description above it names this machine's paths and the
// time taken, which the page replaces with the command.
func tableOnly(out string) string {
	i := strings.Index(out, "\n| ")
	if i < 0 {
		return out
	}
	return out[i+1:]
}

// TestLocomoREADMEResults regenerates the headline results on the dev
// split: the default command and plain BM25, and the pipelines that need
// no model. It needs the data ($RERANKD_LOCOMO; required under CI).
func TestLocomoREADMEResults(t *testing.T) {
	data := testenv.LoCoMo(t)
	var b strings.Builder
	for _, c := range []struct {
		title string
		args  []string
	}{
		{"The default (`retrieval.DefaultRanking`, what `POST /v1/search` ranks with):", nil},
		{"Plain BM25 (k1 1.2, b 0.75, no context, no fields):", []string{"--ranking", "bm25"}},
		{"The default with recency and MMR (recency \"now\" is the conversation's last session, half-life 7 days, weight 0.1; MMR lambda 0.7, window 20, Jaccard similarity since there are no vectors):", []string{"--pipeline", "bm25+recency+mmr"}},
	} {
		args := append([]string{"locomo", "--data", data}, c.args...)
		shown := append([]string{"locomo", "--data", "../shared/locomo"}, c.args...)
		fmt.Fprintf(&b, "%s\n\n```sh\nbin/eval %s\n```\n\n%s\n", c.title, strings.Join(shown, " "), tableOnly(evalOut(t, args...)))
	}
	readmeBlock(t, "results", b.String())
}

// TestLocomoREADMECompare regenerates the page's end-to-end comparison
// of two rerankers: two generated models (random weights, different
// seeds), one evaluated in process and one served by rerankd over HTTP
// (its TEI route), on the committed fixtures, then `eval compare`.
func TestLocomoREADMECompare(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	testenv.Require(t, testenv.TokenizerDir())
	dir := t.TempDir()
	rr, _ := tinyModels(t)
	url := serveRerankd(t, rr)
	common := []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--ort-lib", testenv.ORTLib(), "--tokenizer", testenv.TokenizerDir()}
	// The second reranker: another seed, in process.
	other := filepath.Join(dir, "other")
	writeTinyReranker(t, other, 9)
	a, b := filepath.Join(dir, "served-seed4.txt"), filepath.Join(dir, "inprocess-seed9.txt")
	evalOut(t, append(common, "--rerank-url", url, "--rerank-api", "tei", "--no-cache", "--run", a)...)
	evalOut(t, append(common, "--model", other, "--run", b)...)
	out := evalOut(t, "compare", a, b)
	// Paths of this machine become the names the commands below use.
	out = strings.NewReplacer(dir+"/", "", rr, "rr", other, "other", url, "http://localhost:8080",
		mustAbs(t, fixtures), "benchmarks/locomo/testdata/flat").Replace(out)
	readmeBlock(t, "compare", "```text\n"+out+"```\n")
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
