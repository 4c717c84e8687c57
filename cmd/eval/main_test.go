package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Same data as benchmarks/metrics/testdata/golden.*, where the values are
// worked out by hand.
const (
	goodQrels = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n1 0 d7 1\n2 0 d4 1\n2 0 d5 1\n3 0 d6 1\n"
	goodRun   = "1 Q0 d1 1 2.5 t\n1 Q0 d3 2 2.5 t\n1 Q0 d2 3 1.0 t\n1 Q0 d9 4 0.5 t\n" +
		"2 Q0 d8 1 9 t\n2 Q0 d5 2 8 t\n4 Q0 d6 1 1 t\n"
)

var summaryKeys = []string{"MAP", "MRR", "NDCG@5", "NDCG@10", "P@5",
	"Recall@1", "Recall@5", "Recall@10", "Recall@20", "queries"}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runEval(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// orderedKeys returns the top-level keys of one JSON object in order.
func orderedKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestUsageErrorsExit2(t *testing.T) {
	qrels, runf := writeTemp(t, "q", goodQrels), writeTemp(t, "r", goodRun)
	for _, args := range [][]string{
		{},
		{"nosuch"},
		{"metrics"},
		{"metrics", "--qrels", qrels},
		{"metrics", "--run", runf},
		{"metrics", "--qrels", qrels, "--run", runf, "extra"},
		{"metrics", "--qrels", qrels, "--run", runf, "--bogus"},
	} {
		if code, _, stderr := runEval(args...); code != 2 || stderr == "" {
			t.Errorf("eval %q: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
	if code, _, _ := runEval("metrics", "-h"); code != 0 {
		t.Errorf("metrics -h: exit %d, want 0", code)
	}
}

func TestMetricsJSONKeys(t *testing.T) {
	qrels, runf := writeTemp(t, "q", goodQrels), writeTemp(t, "r", goodRun)
	code, stdout, stderr := runEval("metrics", "--qrels", qrels, "--run", runf, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("want exactly one line of JSON, got %d:\n%s", len(lines), stdout)
	}
	if got := orderedKeys(t, lines[0]); !slices.Equal(got, summaryKeys) {
		t.Fatalf("keys %v, want %v", got, summaryKeys)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m["queries"] != 3 || m["MRR"] != 0.5 {
		t.Errorf("queries = %v, MRR = %v; want 3, 0.5", m["queries"], m["MRR"])
	}
}

func TestMetricsJSONPerQuery(t *testing.T) {
	qrels, runf := writeTemp(t, "q", goodQrels), writeTemp(t, "r", goodRun)
	code, stdout, stderr := runEval("metrics", "--qrels", qrels, "--run", runf, "--json", "--per-query")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 4 { // summary + queries 1, 2, 3
		t.Fatalf("want 4 lines, got %d:\n%s", len(lines), stdout)
	}
	if got := orderedKeys(t, lines[0]); !slices.Equal(got, summaryKeys) {
		t.Fatalf("summary keys %v, want %v", got, summaryKeys)
	}
	wantPer := append([]string{"qid"}, summaryKeys[:len(summaryKeys)-1]...)
	for i, line := range lines[1:] {
		if got := orderedKeys(t, line); !slices.Equal(got, wantPer) {
			t.Fatalf("per-query keys %v, want %v", got, wantPer)
		}
		var p struct{ QID string }
		if err := json.Unmarshal([]byte(line), &p); err != nil || p.QID != []string{"1", "2", "3"}[i] {
			t.Fatalf("line %d: qid %q (%v)", i+2, p.QID, err)
		}
	}
}

func TestMetricsMarkdown(t *testing.T) {
	qrels, runf := writeTemp(t, "q", goodQrels), writeTemp(t, "r", goodRun)
	code, stdout, stderr := runEval("metrics", "--qrels", qrels, "--run", runf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `| metric | value |
| --- | ---: |
| MAP | 0.3056 |
| MRR | 0.5000 |
| NDCG@5 | 0.3698 |
| NDCG@10 | 0.3698 |
| P@5 | 0.2000 |
| Recall@1 | 0.1111 |
| Recall@5 | 0.3889 |
| Recall@10 | 0.3889 |
| Recall@20 | 0.3889 |
| queries | 3 |
`
	if stdout != want {
		t.Fatalf("got\n%s\nwant\n%s", stdout, want)
	}
	_, stdout, _ = runEval("metrics", "--qrels", qrels, "--run", runf, "--per-query")
	if !strings.Contains(stdout, "\n| 3 | 0.0000 | 0.0000 |") || !strings.Contains(stdout, "| qid | MAP |") {
		t.Fatalf("per-query table missing:\n%s", stdout)
	}
}

func TestBadFilesExit1(t *testing.T) {
	goodQ, goodR := writeTemp(t, "q", goodQrels), writeTemp(t, "r", goodRun)
	badQ := writeTemp(t, "bad.qrels", "1 0 d1 1\n\n1 0 d2 maybe\n")
	badR := writeTemp(t, "bad.run", "1 Q0 d1 1 0.5 t\n1 Q0 d2 2\n")
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name, qrels, run, stderr string
	}{
		{"bad qrels line", badQ, goodR, "eval metrics: " + badQ + `:3: relevance "maybe" is not an integer` + "\n"},
		{"bad run line", goodQ, badR, "eval metrics: " + badR + `:2: want 6 fields "qid Q0 docid rank score tag", got 4` + "\n"},
		{"missing file", missing, goodR, "eval metrics: open " + missing + ": no such file or directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runEval("metrics", "--qrels", tt.qrels, "--run", tt.run)
			if code != 1 || stderr != tt.stderr || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, stdout, stderr, tt.stderr)
			}
		})
	}
}
