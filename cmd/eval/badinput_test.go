package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
)

// evalCase is one bad invocation of eval and the documented answer
// (docs/bad-input.md): exit status and what stderr must say.
type evalCase struct {
	name string
	args []string
	code int      // exitFail, exitUsage; exitOK: documented as accepted
	want []string // substrings of stderr
}

// runEvalGuarded runs eval in-process and turns a panic or a hang into a
// test failure.
func runEvalGuarded(t *testing.T, args []string) (code int, stdout, stderr string) {
	t.Helper()
	return testenv.RunGuarded(t, args, 60*time.Second, func(out, errb *bytes.Buffer) int { return run(args, out, errb) })
}

func evalCatalogue(t *testing.T) []evalCase {
	d := t.TempDir()
	w := func(name, content string) string {
		p := filepath.Join(d, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := w("garbage.bin", "\x00\x01\x02\xff\xfe binary\x7f\x00\n\x80\x81")
	empty := w("empty", "")
	deep := w("deep.json", strings.Repeat("[", 100_000))
	qrels, runf := w("good.qrels", goodQrels), w("good.run", goodRun)
	adir := filepath.Join(d, "adir")
	if err := os.Mkdir(adir, 0o755); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(d, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	underFile := filepath.Join(garbage, "sub", "out.txt")
	bad := "\xff\xfe\x00bad"
	locomoDir := func(name, content string) string {
		w(filepath.Join(name, "c1.json"), content)
		return filepath.Join(d, name)
	}
	m := func(q, r string) []string { return []string{"metrics", "--qrels", q, "--run", r} }
	sideRun := w("side.run", goodRun)
	w("side.run.json", "\x00garbage")
	cases := []evalCase{
		{"no command", nil, exitUsage, []string{"usage: eval"}},
		{"unknown command", []string{"nope"}, exitUsage, []string{`unknown command "nope"`}},
		{"invalid UTF-8 command", []string{bad}, exitUsage, []string{`unknown command "\xff\xfe\x00bad"`}},
		{"flag as command", []string{"--qrels", "x"}, exitUsage, []string{"unknown command"}},

		{"metrics: no flags", []string{"metrics"}, exitUsage, []string{"--qrels and --run are required"}},
		{"metrics: unknown flag", []string{"metrics", "--qrel", qrels}, exitUsage, []string{"flag provided but not defined"}},
		{"metrics: invalid UTF-8 flag", []string{"metrics", "--" + bad}, exitUsage, []string{"flag provided but not defined"}},
		{"metrics: positional argument", append(m(qrels, runf), "extra"), exitUsage, []string{`unexpected argument "extra"`}},
		{"metrics: qrels missing", m(filepath.Join(d, "none"), runf), exitFail, []string{"no such file"}},
		{"metrics: qrels is a directory", m(adir, runf), exitFail, []string{"is a directory"}},
		{"metrics: qrels symlink loop", m(loop, runf), exitFail, []string{"too many levels of symbolic links"}},
		{"metrics: qrels path invalid UTF-8", m(filepath.Join(d, "\xff\xfe"), runf), exitFail, []string{"no such file"}},
		{"metrics: qrels path with NUL", m(filepath.Join(d, bad), runf), exitFail, []string{"invalid argument"}},
		{"metrics: qrels binary garbage", m(garbage, runf), exitFail, []string{"garbage.bin:1:", "want 4 fields"}},
		{"metrics: qrels deep JSON", m(deep, runf), exitFail, []string{"deep.json:1:"}},
		{"metrics: qrels empty", m(empty, runf), exitFail, []string{"empty"}},
		{"metrics: qrels rel 1e400", m(w("q1", "1 0 d1 1e400\n"), runf), exitFail, []string{"q1:1:", "not an integer"}},
		{"metrics: qrels rel 2^63", m(w("q2", "1 0 d1 9223372036854775808\n"), runf), exitFail, []string{"q2:1:", "not an integer"}},
		{"metrics: qrels 3 fields", m(w("q3", goodQrels+"2 0 d9\n"), runf), exitFail, []string{"q3:8:", "want 4 fields"}},
		{"metrics: NUL in an id (opaque bytes)", m(w("q4", "1 0 d1\x00 1\n"), runf), exitOK, nil},
		{"metrics: run missing", m(qrels, filepath.Join(d, "none")), exitFail, []string{"no such file"}},
		{"metrics: run is a directory", m(qrels, adir), exitFail, []string{"is a directory"}},
		{"metrics: run binary garbage", m(qrels, garbage), exitFail, []string{"garbage.bin:1:", "want 6 fields"}},
		{"metrics: run score NaN", m(qrels, w("r1", "1 Q0 d1 1 NaN t\n")), exitFail, []string{"r1:1:", "not a finite number"}},
		{"metrics: run score 1e400", m(qrels, w("r2", "1 Q0 d1 1 1e400 t\n")), exitFail, []string{"r2:1:", "not a finite number"}},
		{"metrics: run score -Inf", m(qrels, w("r3", "1 Q0 d1 1 -Inf t\n")), exitFail, []string{"r3:1:", "not a finite number"}},
		{"metrics: run rank 2^63", m(qrels, w("r4", "1 Q0 d1 9223372036854775808 1 t\n")), exitFail, []string{"r4:1:", "not an integer"}},
		{"metrics: run duplicate doc", m(qrels, w("r5", "1 Q0 d1 1 1 t\n1 Q0 d1 2 0.5 t\n")), exitFail, []string{"r5:2:", "duplicate doc"}},
		{"metrics: run truncated line", m(qrels, w("r6", goodRun+"1 Q0 d7 5")), exitFail, []string{"r6:8:", "want 6 fields"}},
		{"metrics: invalid UTF-8 ids (opaque bytes)", m(w("q5", "\xff 0 d\xfe 1\n"), w("r7", "\xff Q0 d\xfe 1 1 t\n")), exitOK, nil},

		{"locomo: no --data", []string{"locomo"}, exitUsage, []string{"--data is required"}},
		{"locomo: data missing", []string{"locomo", "--data", filepath.Join(d, "none")}, exitFail, []string{"no such file"}},
		{"locomo: data path invalid UTF-8", []string{"locomo", "--data", filepath.Join(d, bad)}, exitFail, []string{"locomo"}},
		{"locomo: data symlink loop", []string{"locomo", "--data", loop}, exitFail, []string{"too many levels of symbolic links"}},
		{"locomo: data empty directory", []string{"locomo", "--data", adir}, exitFail, []string{"no .json files"}},
		{"locomo: data binary garbage", []string{"locomo", "--data", garbage}, exitFail, []string{"garbage.bin"}},
		{"locomo: data empty file", []string{"locomo", "--data", empty}, exitFail, []string{"empty"}},
		{"locomo: data deep JSON", []string{"locomo", "--data", deep}, exitFail, []string{"deep.json"}},
		{"locomo: data /etc/passwd via traversal", []string{"locomo", "--data", "../../../../../../../../etc/passwd"}, exitFail, []string{"passwd"}},
		{"locomo: truncated JSON", []string{"locomo", "--data", locomoDir("trunc", `{"speaker_a": "Ada", "session_1": [{"speaker"`)}, exitFail, []string{"c1.json"}},
		{"locomo: wrong types", []string{"locomo", "--data", locomoDir("types", `{"speaker_a": 5, "session_1": "not turns", "qa": {"q": 1}}`)}, exitFail, []string{"c1.json"}},
		{"locomo: top-level number", []string{"locomo", "--data", locomoDir("num", `1e400`)}, exitFail, []string{"c1.json"}},
		{"locomo: NUL bytes", []string{"locomo", "--data", locomoDir("nul", "{\"speaker_a\": \"A\x00\"}")}, exitFail, []string{"c1.json"}},
		{"locomo: bad pipeline", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+magic"}, exitUsage, []string{"magic"}},
		{"locomo: pipeline invalid UTF-8", []string{"locomo", "--data", fixtures, "--pipeline", bad}, exitUsage, []string{"pipeline"}},
		{"locomo: bad unit", []string{"locomo", "--data", fixtures, "--unit", "paragraph"}, exitUsage, []string{"paragraph"}},
		{"locomo: depth zero", []string{"locomo", "--data", fixtures, "--depth", "0"}, exitUsage, []string{"--depth"}},
		{"locomo: depth 2^63", []string{"locomo", "--data", fixtures, "--depth", "9223372036854775808"}, exitUsage, []string{"-depth"}},
		{"locomo: k1 negative", []string{"locomo", "--data", fixtures, "--k1", "-1"}, exitUsage, []string{"k1 -1"}},
		{"locomo: k1 NaN", []string{"locomo", "--data", fixtures, "--k1", "NaN"}, exitUsage, []string{"k1 NaN"}},
		{"locomo: b 1e400", []string{"locomo", "--data", fixtures, "--b", "1e400"}, exitUsage, []string{"-b"}},
		{"locomo: bad fusion", []string{"locomo", "--data", fixtures, "--pipeline", "hybrid", "--fusion", "max"}, exitUsage, []string{"max"}},
		{"locomo: mmr lambda 5", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+mmr", "--mmr-lambda", "5"}, exitUsage, []string{"--mmr-lambda 5: want a number in [0, 1]"}},
		{"locomo: negative half-life", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+recency", "--half-life", "-1h"}, exitUsage, []string{"--half-life -1h0m0s: want a duration > 0"}},
		{"locomo: rerank model missing", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--model", filepath.Join(d, "nomodel")}, exitFail, []string{"nomodel"}},
		{"locomo: rerank model garbage folder", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--model", adir}, exitFail, []string{"adir"}},
		{"locomo: --run into a directory", []string{"locomo", "--data", fixtures, "--run", adir}, exitFail, []string{"adir"}},
		{"locomo: --qrels under a file", []string{"locomo", "--data", fixtures, "--qrels", underFile}, exitFail, []string{"not a directory"}},
		{"locomo: --model and --rerank-url", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--model", adir, "--rerank-url", "http://127.0.0.1:1"}, exitUsage, []string{"--model and --rerank-url"}},
		{"locomo: --embed-model and --embed-url", []string{"locomo", "--data", fixtures, "--pipeline", "dense", "--embed-model", adir, "--embed-url", "http://127.0.0.1:1"}, exitUsage, []string{"--embed-model and --embed-url"}},
		{"locomo: --rerank-url without a rerank stage", []string{"locomo", "--data", fixtures, "--rerank-url", "http://127.0.0.1:1"}, exitUsage, []string{"--rerank-url", "no rerank stage"}},
		{"locomo: --embed-url with bm25", []string{"locomo", "--data", fixtures, "--embed-url", "http://127.0.0.1:1"}, exitUsage, []string{"--embed-url", "embeds nothing"}},
		{"locomo: --rerank-url without a scheme", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "localhost:8080"}, exitUsage, []string{"--rerank-url", "http://"}},
		{"locomo: --embed-url ftp", []string{"locomo", "--data", fixtures, "--pipeline", "dense", "--embed-url", "ftp://host/x"}, exitUsage, []string{"--embed-url"}},
		{"locomo: --rerank-url invalid UTF-8", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://" + bad}, exitUsage, []string{"--rerank-url"}},
		{"locomo: unknown --rerank-api", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://h", "--rerank-api", "grpc"}, exitUsage, []string{"--rerank-api", "grpc"}},
		{"locomo: served flags all wrong at once", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://h", "--concurrency", "0", "--max-docs", "-1", "--retries", "-1", "--request-timeout", "0s"},
			exitUsage, []string{"--concurrency 0", "--max-docs -1", "--retries -1", "--request-timeout 0s"}},
		{"locomo: --rerank-url refuses connections", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://127.0.0.1:1", "--retries", "0", "--no-cache"}, exitFail, []string{"127.0.0.1:1", "refused"}},
		{"locomo: --embed-url refuses connections", []string{"locomo", "--data", fixtures, "--pipeline", "dense", "--embed-url", "http://127.0.0.1:1", "--retries", "0", "--no-cache"}, exitFail, []string{"--embed-url", "refused"}},
		{"locomo: --cache is not a cache", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://127.0.0.1:1", "--cache", qrels}, exitFail, []string{"good.qrels", "not a cache line"}},
		{"locomo: --cache under a file", []string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--rerank-url", "http://127.0.0.1:1", "--cache", underFile}, exitFail, []string{"not a directory"}},

		{"compare: one run", []string{"compare", runf}, exitUsage, []string{"two run files"}},
		{"compare: permutations zero", []string{"compare", "--permutations", "0", runf, runf}, exitUsage, []string{"--permutations"}},
		{"compare: --qrels and --data", []string{"compare", "--qrels", qrels, "--data", fixtures, runf, runf}, exitUsage, []string{"--qrels and --data"}},
		{"compare: no sidecar, no judgments", []string{"compare", runf, runf}, exitUsage, []string{"no sidecar", "--data or --qrels"}},
		{"compare: run garbage", []string{"compare", "--qrels", qrels, runf, garbage}, exitFail, []string{"garbage.bin:1:"}},
		{"compare: run missing", []string{"compare", "--qrels", qrels, runf, filepath.Join(d, "none")}, exitFail, []string{"no such file"}},
		{"compare: sidecar garbage", []string{"compare", "--qrels", qrels, runf, sideRun}, exitFail, []string{"side.run.json"}},
		{"compare: --png under a file", []string{"compare", "--qrels", qrels, "--png", underFile, runf, runf}, exitFail, []string{"--png", "not a directory"}},

		{"calibrate: no source", []string{"calibrate"}, exitUsage, []string{"exactly one of --data"}},
		{"calibrate: both sources", []string{"calibrate", "--data", fixtures, "--run", runf, "--qrels", qrels}, exitUsage, []string{"exactly one of --data"}},
		{"calibrate: run without qrels", []string{"calibrate", "--run", runf}, exitUsage, []string{"--run needs --qrels"}},
		{"calibrate: bad method", []string{"calibrate", "--data", fixtures, "--method", "magic"}, exitUsage, []string{"magic"}},
		{"calibrate: bad rule", []string{"calibrate", "--data", fixtures, "--rule", "precision:2"}, exitUsage, []string{"--rule"}},
		{"calibrate: rule invalid UTF-8", []string{"calibrate", "--data", fixtures, "--rule", bad}, exitUsage, []string{"--rule"}},
		{"calibrate: bins zero", []string{"calibrate", "--data", fixtures, "--bins", "0"}, exitUsage, []string{"bins"}},
		{"calibrate: ranking flag with --run", []string{"calibrate", "--run", runf, "--qrels", qrels, "--b", "0.3"}, exitUsage, []string{"go with --data"}},
		{"calibrate: unknown ranking", []string{"calibrate", "--data", fixtures, "--ranking", "tfidf"}, exitUsage, []string{"--ranking", "tfidf"}},
		{"calibrate: ranking checked before reading", []string{"calibrate", "--data", filepath.Join(d, "none"), "--k1", "-1"}, exitUsage, []string{"k1 -1"}},
		// Flag errors come before any file is read (the files do not exist).
		{"calibrate: bins checked before reading", []string{"calibrate", "--data", filepath.Join(d, "none"), "--bins", "0"}, exitUsage, []string{"bins"}},
		{"calibrate: feature checked before reading", []string{"calibrate", "--run", filepath.Join(d, "none"), "--qrels", filepath.Join(d, "none"), "--feature", "vibes"}, exitUsage, []string{"vibes"}},
		{"calibrate: input checked before reading", []string{"calibrate", "--run", filepath.Join(d, "none"), "--qrels", filepath.Join(d, "none"), "--input", "decibel"}, exitUsage, []string{"--input"}},
		{"calibrate: identity on raw scores checked before reading", []string{"calibrate", "--data", filepath.Join(d, "none"), "--score", "raw", "--method", "identity"}, exitUsage, []string{"identity needs probability"}},
		{"calibrate: bad input scale", []string{"calibrate", "--run", runf, "--qrels", qrels, "--input", "decibel"}, exitUsage, []string{"--input"}},
		{"calibrate: bad score", []string{"calibrate", "--data", fixtures, "--score", "loud"}, exitUsage, []string{"--score"}},
		{"calibrate: bad feature", []string{"calibrate", "--data", fixtures, "--feature", "vibes"}, exitUsage, []string{"vibes"}},
		{"calibrate: run garbage", []string{"calibrate", "--run", garbage, "--qrels", qrels}, exitFail, []string{"garbage.bin:1:"}},
		{"calibrate: qrels is a directory", []string{"calibrate", "--run", runf, "--qrels", adir}, exitFail, []string{"is a directory"}},
		{"calibrate: groups missing", []string{"calibrate", "--run", runf, "--qrels", qrels, "--groups", filepath.Join(d, "none")}, exitFail, []string{"no such file"}},
		{"calibrate: groups garbage", []string{"calibrate", "--run", runf, "--qrels", qrels, "--groups", garbage}, exitFail, []string{"garbage.bin"}},
		{"calibrate: data garbage", []string{"calibrate", "--data", garbage}, exitFail, []string{"garbage.bin"}},
		{"calibrate: --out is a directory", []string{"calibrate", "--data", fixtures, "--out", adir}, exitFail, []string{"adir"}},
		{"calibrate: --out under a file", []string{"calibrate", "--data", fixtures, "--out", underFile}, exitFail, []string{"not a directory"}},
		{"calibrate: --plots is a file", []string{"calibrate", "--data", fixtures, "--plots", garbage}, exitFail, []string{"garbage.bin"}},

		{"zh: bad cjk mode", []string{"zh", "--cjk", "kanji"}, exitUsage, []string{"kanji"}},
		{"zh: depth zero", []string{"zh", "--depth", "0"}, exitUsage, []string{"--depth"}},
		{"zh: k1 negative", []string{"zh", "--k1", "-1"}, exitUsage, []string{"k1 -1"}},
		{"zh: positional argument", []string{"zh", "extra"}, exitUsage, []string{`unexpected argument "extra"`}},
		{"zh: unknown flag", []string{"zh", "--data", "x"}, exitUsage, []string{"flag provided but not defined"}},
	}
	return cases
}

// TestBadInputEval runs every catalogue entry in-process: the documented
// exit status, a message on stderr naming the command, no panic, no hang.
func TestBadInputEval(t *testing.T) {
	cases := evalCatalogue(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runEvalGuarded(t, c.args)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if c.code == exitOK {
				return
			}
			if !strings.Contains(errs, "eval") {
				t.Errorf("stderr %q does not say which program failed", errs)
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
		})
	}
	t.Logf("%d eval catalogue entries", len(cases))
}
