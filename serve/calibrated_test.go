package serve

import (
	"math"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scoring"
)

// platt returns a calibration p = sigmoid(a·logit(s) + b) with threshold t.
func platt(a, b, t float64) *calibrate.Calibration {
	return &calibrate.Calibration{Version: 1, Method: calibrate.MethodPlatt, Input: calibrate.InputProbability,
		Platt: &calibrate.Platt{Slope: a, Intercept: b, Feature: calibrate.FeatureLogit}, Threshold: t, Rule: "manual",
		Source: calibrate.Source{Pipeline: "test", Data: "hand-made", Pairs: 10, Positives: 5, Groups: 2}}
}

func TestCalibratedBackend(t *testing.T) {
	// The fake scores (1+m)/(2+n): "support group" vs "support group
	// meeting" is 3/4, vs "painting class" 1/4. With a = 1, b = -ln 3 the
	// calibrated probability of 3/4 is sigmoid(ln 3 - ln 3) = 0.5 and of
	// 1/4 is sigmoid(-2 ln 3) = 0.1.
	b, err := scoring.NewCalibrated(&fakeBackend{}, platt(1, -math.Log(3), 0.3))
	if err != nil {
		t.Fatal(err)
	}
	url := startMemory(t, DefaultConfig(), b, retrieval.DefaultConfig())
	r := postJSON(t, url+"/rerank", `{"query":"support group","documents":["support group meeting","painting class"]}`)
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	if r.code != 200 || len(resp.Results) != 1 || math.Abs(resp.Results[0].RelevanceScore-0.5) > 1e-9 {
		t.Fatalf("calibrated default threshold 0.3 should keep only the 0.5 document: %s", r.body)
	}
	r = postJSON(t, url+"/rerank", `{"query":"support group","documents":["support group meeting","painting class"],"threshold":0}`)
	decodeInto(t, r, &resp)
	if len(resp.Results) != 2 || math.Abs(resp.Results[1].RelevanceScore-0.1) > 1e-9 {
		t.Fatalf("threshold 0 keeps both, calibrated: %s", r.body)
	}
	r = do(t, "GET", url+"/info", "", "")
	var info api.Info
	decodeInto(t, r, &info)
	if info.Calibration == nil || info.Calibration.Threshold != 0.3 || info.Calibration.Method != "platt" {
		t.Fatalf("/info: %s", r.body)
	}
	// Memory search: the rerank stage is calibrated and thresholded too.
	postJSON(t, url+"/v1/memories", `{"namespace":"u","memories":[{"id":"a","text":"support group meeting"},{"id":"b","text":"support painting class"}]}`)
	r = postJSON(t, url+"/v1/search", `{"namespace":"u","query":"support group"}`)
	var sr api.SearchResponse
	decodeInto(t, r, &sr)
	if len(sr.Results) != 1 || sr.Results[0].ID != "a" || math.Abs(sr.Results[0].Scores["rerank"]-0.5) > 1e-9 || sr.Counts.Reranked != 2 {
		t.Fatalf("search: %s", r.body)
	}
}

func TestCalibratedRefusesRawInput(t *testing.T) {
	c := platt(1, 0, 0.5)
	c.Input, c.Platt.Feature = calibrate.InputReal, calibrate.FeatureScore
	if _, err := scoring.NewCalibrated(&fakeBackend{}, c); err == nil || !strings.Contains(err.Error(), "real") {
		t.Fatalf("err = %v", err)
	}
}
