package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
)

// TestRandomWeightsInEval: a reranker from the test-model generator
// (random weights) is named as such wherever eval reports on it: the
// locomo summary prints a WARNING line and marks the stage, the run's
// sidecar records random_weights, and eval calibrate on that run warns on
// stderr and writes the warning into the calibration file's notes. With
// the marker removed, none of it appears.
func TestRandomWeightsInEval(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	testenv.Require(t, testenv.TokenizerDir())
	rr := fixture.Model(t, arch.Tiny(), 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	copyDir := t.TempDir()
	if err := os.CopyFS(copyDir, os.DirFS(rr)); err != nil {
		t.Fatal(err)
	}
	for _, marked := range []bool{true, false} {
		if !marked {
			if err := os.Remove(filepath.Join(copyDir, folder.MarkerFile)); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		runFile, qrels, calFile := filepath.Join(dir, "run.txt"), filepath.Join(dir, "qrels.txt"), filepath.Join(dir, "cal.json")
		var out, errb bytes.Buffer
		code := run([]string{"locomo", "--data", fixtures, "--pipeline", "bm25+rerank", "--model", copyDir, "--ort-lib", testenv.ORTLib(),
			"--tokenizer", testenv.TokenizerDir(), "--rerank-depth", "3", "--run", runFile, "--qrels", qrels}, &out, &errb)
		if code != exitOK {
			t.Fatalf("locomo: exit %d: %s", code, errb.String())
		}
		sidecar, err := os.ReadFile(runFile + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var calOut, calErr bytes.Buffer
		if code := run([]string{"calibrate", "--run", runFile, "--qrels", qrels, "--out", calFile}, &calOut, &calErr); code != exitOK {
			t.Fatalf("calibrate: exit %d: %s", code, calErr.String())
		}
		cal, err := os.ReadFile(calFile)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{
			"summary WARNING":      strings.Contains(out.String(), "WARNING: the reranker") && strings.Contains(out.String(), "RANDOM WEIGHTS"),
			"stage marked":         strings.Contains(out.String(), "[RANDOM WEIGHTS]"),
			"sidecar":              strings.Contains(string(sidecar), `"random_weights": true`),
			"calibrate stderr":     strings.Contains(calErr.String(), "WARNING") && strings.Contains(calErr.String(), "RANDOM WEIGHTS"),
			"calibration notes":    strings.Contains(string(cal), "RANDOM WEIGHTS"),
			"calibrate table note": strings.Contains(calOut.String(), "RANDOM WEIGHTS"),
		}
		for what, ok := range got {
			if ok != marked {
				t.Errorf("marked %v: %s shown %v", marked, what, ok)
			}
		}
	}
}
