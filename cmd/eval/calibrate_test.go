package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/calibrate/plots"
	"github.com/rerankd/rerankd/internal/testenv"
)

// calibrateJSON runs eval calibrate with --json and decodes the result.
func calibrateJSON(t *testing.T, args ...string) calibrateResult {
	t.Helper()
	code, stdout, stderr := runEval(append([]string{"calibrate", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("eval calibrate %v: exit %d: %s", args, code, stderr)
	}
	var res calibrateResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if res.Calibration == nil {
		t.Fatalf("no calibration in %s", stdout)
	}
	if err := res.Calibration.Validate(); err != nil {
		t.Fatalf("printed calibration invalid: %v", err)
	}
	return res
}

// locomoFiles writes eval locomo's TREC run and qrels for the fixtures,
// with extra flags (a ranking) on top of the defaults.
func locomoFiles(t *testing.T, extra ...string) (runFile, qrelsFile string) {
	t.Helper()
	dir := t.TempDir()
	runFile, qrelsFile = filepath.Join(dir, "run.txt"), filepath.Join(dir, "qrels.txt")
	args := append([]string{"locomo", "--data", fixtures, "--run", runFile, "--qrels", qrelsFile}, extra...)
	if code, _, stderr := runEval(args...); code != exitOK {
		t.Fatalf("eval locomo: %s", stderr)
	}
	return runFile, qrelsFile
}

func TestCalibrateLocomoFixtures(t *testing.T) {
	dir := t.TempDir()
	out, plotDir := filepath.Join(dir, "calib.json"), filepath.Join(dir, "plots")
	for _, method := range []string{"platt", "isotonic", "identity"} {
		t.Run(method, func(t *testing.T) {
			args := []string{"--data", fixtures, "--method", method, "--out", out}
			if method == "platt" { // drawing is slow under -race; once is enough
				args = append(args, "--plots", plotDir)
			}
			res := calibrateJSON(t, args...)
			c := res.Calibration
			if c.Method != calibrate.Method(method) || c.Input != calibrate.InputProbability || c.Source.Groups != 2 || len(res.Folds) != 2 {
				t.Fatalf("method %s input %s groups %d folds %d", c.Method, c.Input, c.Source.Groups, len(res.Folds))
			}
			// 31: the default ranking's context stage adds neighbours to the
			// 20 memories sharing a term with their question.
			if c.Source.Pairs != 31 || c.Source.Unit != "turn" || c.Source.Depth != 100 || c.HeldOut == nil || c.InSample == nil {
				t.Fatalf("source %+v held-out %v", c.Source, c.HeldOut)
			}
			if (res.Uncalibrated != nil) != (method != "identity") {
				t.Errorf("uncalibrated baseline present = %v", res.Uncalibrated != nil)
			}
			loaded, err := calibrate.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Threshold != c.Threshold || loaded.Method != c.Method {
				t.Errorf("file: %+v, printed %+v", loaded, c)
			}
			for _, name := range plots.Files { // written by the platt run
				if st, err := os.Stat(filepath.Join(plotDir, name)); err != nil || st.Size() == 0 {
					t.Errorf("plot %s: %v", name, err)
				}
			}
		})
	}
	code, stdout, stderr := runEval("calibrate", "--data", fixtures, "--rule", "precision:0.5")
	if code != exitOK || !strings.Contains(stdout, "| held out (leave one group out) |") || !strings.Contains(stdout, "rule precision:0.5") {
		t.Fatalf("table: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Raw BM25 is not a probability: real input, Platt on the score.
	res := calibrateJSON(t, "--data", fixtures, "--score", "raw")
	if res.Calibration.Input != calibrate.InputReal || res.Calibration.Platt.Feature != calibrate.FeatureScore || res.Uncalibrated != nil {
		t.Errorf("--score raw: input %s feature %s", res.Calibration.Input, res.Calibration.Platt.Feature)
	}
}

// TestCalibrateRunFile: eval locomo's own run calibrates the same pairs as
// --data --score raw with the same ranking flags, the defaults included (one
// default: the cross-validated ranking, not plain BM25), with groups taken
// from the qids.
func TestCalibrateRunFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"defaults", nil},
		{"plain bm25", []string{"--ranking", "bm25"}},
		{"b override", []string{"--b", "0.5", "--field-time", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runFile, qrelsFile := locomoFiles(t, tc.flags...)
			fromRun := calibrateJSON(t, "--run", runFile, "--qrels", qrelsFile)
			fromData := calibrateJSON(t, append([]string{"--data", fixtures, "--score", "raw"}, tc.flags...)...)
			a, b := fromRun.Calibration, fromData.Calibration
			if a.Input != calibrate.InputReal || a.Source.Groups != 2 || a.Source.Pairs != b.Source.Pairs || a.Source.Positives != b.Source.Positives {
				t.Fatalf("run: %+v\ndata: %+v", a.Source, b.Source)
			}
			if !near(a.Platt.Slope, b.Platt.Slope) || !near(a.Platt.Intercept, b.Platt.Intercept) || !near(a.HeldOut.Brier, b.HeldOut.Brier) {
				t.Errorf("run file fit %+v, data fit %+v", a.Platt, b.Platt)
			}
		})
	}
	// The rankings differ on the fixtures, so the cases above compare
	// something: plain BM25 and the default fit differently.
	plain := calibrateJSON(t, "--data", fixtures, "--score", "raw", "--ranking", "bm25").Calibration
	def := calibrateJSON(t, "--data", fixtures, "--score", "raw").Calibration
	if near(plain.Platt.Slope, def.Platt.Slope) && near(plain.Platt.Intercept, def.Platt.Intercept) {
		t.Errorf("--ranking bm25 and default fit alike (%+v): the fixtures cannot tell the defaults apart", def.Platt)
	}
	runFile, qrelsFile := locomoFiles(t)
	// An explicit mapping: one group per query.
	data, err := os.ReadFile(qrelsFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		lines = append(lines, strings.Fields(l)[0]+" "+strings.Fields(l)[0])
	}
	groups := writeTemp(t, "groups", "# qid group\n"+strings.Join(lines, "\n")+"\n")
	res := calibrateJSON(t, "--run", runFile, "--qrels", qrelsFile, "--groups", groups, "--method", "isotonic", "--depth", "3")
	if res.Calibration.Source.Groups != 7 || res.Calibration.Source.Pairs > 21 {
		t.Errorf("per-query groups: %+v", res.Calibration.Source)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestCalibrateErrors(t *testing.T) {
	runFile, qrelsFile := locomoFiles(t)
	badRun := writeTemp(t, "bad.run", "26/Q0 Q0 d1 1 0.5 t\n26/Q0 Q0 d2 2\n")
	nanRun := writeTemp(t, "nan.run", "a/1 Q0 d1 1 NaN t\nb/1 Q0 d1 1 0.5 t\n")
	nanQrels := writeTemp(t, "nan.qrels", "a/1 0 d1 1\nb/1 0 d1 0\n")
	oneGroup := writeTemp(t, "one.run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\n")
	oneQrels := writeTemp(t, "one.qrels", "q1 0 d1 1\n")
	badGroups := writeTemp(t, "bad.groups", "a1/Q0\n")
	partial := writeTemp(t, "partial.groups", "a1/Q0 x\n")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no input", nil, exitUsage, "exactly one of --data"},
		{"both inputs", []string{"--data", fixtures, "--run", runFile, "--qrels", qrelsFile}, exitUsage, "exactly one"},
		{"run without qrels", []string{"--run", runFile}, exitUsage, "--run needs --qrels"},
		{"stray argument", []string{"--data", fixtures, "extra"}, exitUsage, `"extra"`},
		{"unknown flag", []string{"--data", fixtures, "--bogus"}, exitUsage, "bogus"},
		{"bad method", []string{"--data", fixtures, "--method", "svm"}, exitUsage, `method "svm"`},
		{"bad rule", []string{"--data", fixtures, "--rule", "best"}, exitUsage, `--rule "best"`},
		{"manual rule", []string{"--data", fixtures, "--rule", "manual"}, exitUsage, "--rule"},
		{"bad precision", []string{"--data", fixtures, "--rule", "precision:2"}, exitUsage, "precision:2"},
		{"bad depth", []string{"--data", fixtures, "--depth", "0"}, exitUsage, "--depth"},
		{"bad bins", []string{"--data", fixtures, "--bins", "0"}, exitUsage, "bins 0"},
		{"bad unit", []string{"--data", fixtures, "--unit", "word"}, exitUsage, "word"},
		{"bad score", []string{"--data", fixtures, "--score", "cooked"}, exitUsage, "cooked"},
		{"feature without platt", []string{"--data", fixtures, "--method", "isotonic", "--feature", "score"}, exitUsage, "--feature"},
		{"logit of raw", []string{"--data", fixtures, "--score", "raw", "--feature", "logit"}, exitUsage, "logit"},
		{"identity of raw", []string{"--run", runFile, "--qrels", qrelsFile, "--method", "identity"}, exitUsage, "identity needs probability"},
		{"run flag with data", []string{"--data", fixtures, "--groups", badGroups}, exitUsage, "go with --run"},
		{"data flag with run", []string{"--run", runFile, "--qrels", qrelsFile, "--unit", "session"}, exitUsage, "go with --data"},
		{"ranking with run", []string{"--run", runFile, "--qrels", qrelsFile, "--ranking", "bm25"}, exitUsage, "go with --data"},
		{"ranking flag with run", []string{"--run", runFile, "--qrels", qrelsFile, "--k1", "1"}, exitUsage, "go with --data"},
		{"bad ranking", []string{"--data", fixtures, "--ranking", "tfidf"}, exitUsage, `--ranking: name "tfidf"`},
		{"bad b", []string{"--data", fixtures, "--b", "2"}, exitUsage, "b 2"},
		{"bad input", []string{"--run", runFile, "--qrels", qrelsFile, "--input", "logits"}, exitUsage, "logits"},
		{"missing data", []string{"--data", "/nonexistent"}, exitFail, "nonexistent"},
		{"bad run line", []string{"--run", badRun, "--qrels", qrelsFile}, exitFail, badRun + ":2:"},
		{"probability out of range", []string{"--run", runFile, "--qrels", qrelsFile, "--input", "probability"}, exitFail, "outside [0, 1]"},
		{"NaN score", []string{"--run", nanRun, "--qrels", nanQrels}, exitFail, "finite"},
		{"one group", []string{"--run", oneGroup, "--qrels", oneQrels}, exitFail, "at least 2 groups"},
		{"nothing judged", []string{"--run", oneGroup, "--qrels", nanQrels}, exitFail, "no query of the run is judged"},
		{"bad groups line", []string{"--run", runFile, "--qrels", qrelsFile, "--groups", badGroups}, exitFail, badGroups + ":1:"},
		{"query without group", []string{"--run", runFile, "--qrels", qrelsFile, "--groups", partial}, exitFail, "no group"},
		{"unwritable out", []string{"--data", fixtures, "--out", filepath.Join(t.TempDir(), "no", "c.json")}, exitFail, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runEval(append([]string{"calibrate"}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.want) || (code != exitOK && stdout != "") {
				t.Fatalf("exit %d, stderr %q, stdout %q; want %d mentioning %q", code, stderr, stdout, c.code, c.want)
			}
		})
	}
	if code, _, _ := runEval("calibrate", "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}

func TestQueryGroup(t *testing.T) {
	for qid, want := range map[string]string{"26/Q3": "26", "conv:7": "conv", "a_b_c": "a", "plain": "plain", "/lead": "/lead"} {
		if got := queryGroup(qid); got != want {
			t.Errorf("queryGroup(%q) = %q, want %q", qid, got, want)
		}
	}
}

// TestCalibrateDevSplit runs the whole thing on the LoCoMo dev split (CI
// sets RERANKD_LOCOMO): five conversations, calibrated well held out. It
// calibrates the raw lexical score (eval locomo's run, one pass): scoring the
// split dominates the time under -race, the served score needs a second
// pass, and the fixture tests cover that path.
func TestCalibrateDevSplit(t *testing.T) {
	data := testenv.LoCoMo(t)
	res := calibrateJSON(t, "--data", data, "--score", "raw")
	c, h := res.Calibration, res.Calibration.HeldOut
	if c.Source.Groups != 5 || len(res.Folds) != 5 || c.Source.Pairs < 90000 || c.Source.Positives < 500 {
		t.Fatalf("source %+v", c.Source)
	}
	// Measured with the default ranking: ECE 0.0025, Brier 0.0109, F1
	// 0.289; the base rate alone (1.2%) gives Brier 0.0118.
	base := float64(c.Source.Positives) / float64(c.Source.Pairs)
	if h.ECE > 0.01 || h.Brier > 0.95*base*(1-base) || h.F1 < 0.2 {
		t.Errorf("held-out %+v (base-rate Brier %.4f)", h, base*(1-base))
	}
}
