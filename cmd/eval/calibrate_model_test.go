package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/rerank"
)

// TestCalibrateModelScores is a code-path test with a neural backend's
// scores: a generated (random-weight, so meaningless) tiny model scores
// BM25's top 20 for two questions per conversation, about 200 pairs on
// the dev split, and eval calibrate reads them as probabilities.
func TestCalibrateModelScores(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	testenv.Require(t, testenv.TokenizerDir())
	start := time.Now()
	dir := t.TempDir()
	modelDir := fixture.Model(t, arch.Tiny(), 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	opts := model.DefaultOptions()
	opts.RuntimeLib = testenv.ORTLib()
	scorer, _, err := model.Open(modelDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = scorer.Close() }()
	t.Logf("model written and opened in %v", time.Since(start))

	data := testenv.LoCoMoOr(t, fixtures)
	ds, err := locomo.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	qrels := metrics.Qrels(ds.Qrels(locomo.UnitTurn))
	for i := range ds.Conversations { // two judged questions each
		conv := &ds.Conversations[i]
		var keep []locomo.Question
		for _, q := range conv.Questions {
			if _, ok := qrels[q.ID]; ok && len(keep) < 2 {
				keep = append(keep, q)
			}
		}
		conv.Questions = keep
	}
	candidates, _ := bm25Run(ds, locomo.UnitTurn, lexical.Default(), 20, qrels, io.Discard)
	run := metrics.Run{}
	for _, conv := range ds.Conversations {
		text := map[string]string{}
		for _, m := range conv.Memories(locomo.UnitTurn) {
			text[m.DocID] = m.Text
		}
		for _, q := range conv.Questions {
			ranked := candidates[q.ID]
			docs := make([]string, len(ranked))
			for i, r := range ranked {
				docs[i] = text[r.DocID]
			}
			scores, err := scorer.Score(context.Background(), rerank.Request{Query: q.Text, Docs: docs})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range scores {
				run[q.ID] = append(run[q.ID], metrics.Ranked{DocID: ranked[i].DocID, Score: s.Score})
			}
		}
	}
	t.Logf("scored in %v", time.Since(start))
	runFile, qrelsFile := filepath.Join(dir, "run.txt"), filepath.Join(dir, "qrels.txt")
	if err := writeTREC(runFile, func(w io.Writer) error { return metrics.WriteRun(w, run, "tiny") }); err != nil {
		t.Fatal(err)
	}
	if err := writeTREC(qrelsFile, func(w io.Writer) error { return metrics.WriteQrels(w, qrels) }); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"platt", "isotonic"} {
		res := calibrateJSON(t, "--run", runFile, "--qrels", qrelsFile, "--method", method)
		c := res.Calibration
		if c.Input != calibrate.InputProbability || c.Source.Groups != len(ds.Conversations) || res.Uncalibrated == nil {
			t.Fatalf("%s: input %s, source %+v", method, c.Input, c.Source)
		}
		t.Logf("%s on %d tiny-model pairs: held-out %+v", method, c.Source.Pairs, *c.HeldOut)
	}
}
