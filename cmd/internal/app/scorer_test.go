package app

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/rerank"
)

// TestBuildHandsTheScorerDown: Build makes one scorer and hands it to both
// /rerank (App.Backend, given to serve.New) and the memory service's
// rerank stage (retrieval.Config.Rerank): the service scores a search's
// candidates exactly as /rerank scores the same documents, calibration
// included, and takes the calibration's threshold and the lexical
// default's "rerank only when asked" from it. Nothing is a closure over
// the HTTP server.
func TestBuildHandsTheScorerDown(t *testing.T) {
	calFile := filepath.Join(t.TempDir(), "cal.json")
	cal := &calibrate.Calibration{Version: 1, Method: calibrate.MethodPlatt, Input: calibrate.InputProbability,
		Platt: &calibrate.Platt{Slope: 2, Intercept: -1, Feature: calibrate.FeatureLogit}, Threshold: 0.25, Rule: "manual",
		Source: calibrate.Source{Pipeline: "test", Data: "hand-made", Pairs: 10, Positives: 5, Groups: 2, Model: lexical.ModelID}}
	if err := cal.Save(calFile); err != nil {
		t.Fatal(err)
	}
	docs := []string{"Caroline went to the support group", "Melanie painted a sunset", "support group on Tuesday"}
	for _, calibrated := range []bool{false, true} {
		c := testMemoryConfig(t)
		if calibrated {
			c.Calibration = calFile
		}
		a, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		rr := a.Memory.Config().Rerank
		if rr.Scorer == nil || rr.ByDefault || rr.MaxDepth != c.Server.MaxDocuments {
			t.Errorf("calibrated %v: reranking %+v: want a scorer, not by default (lexical), max depth %d", calibrated, rr, c.Server.MaxDocuments)
		}
		if calibrated != (rr.Threshold != nil) || (calibrated && *rr.Threshold != cal.Threshold) {
			t.Errorf("calibrated %v: default threshold %v, want the calibration's", calibrated, rr.Threshold)
		}
		ctx := context.Background()
		got, err := rr.Scorer.Score(ctx, "", "support group", docs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := a.Backend.Score(ctx, rerank.Request{Query: "support group", Docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		for i := range docs {
			if math.Abs(got[i]-want.Scores[i].Score) > 1e-12 {
				t.Errorf("calibrated %v: doc %d: the memory service scores %v, /rerank's backend %v", calibrated, i, got[i], want.Scores[i].Score)
			}
		}
		if err := a.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
