package serve

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/scoring"
)

// neuralBackend writes a tiny random-weight model and serves it through the
// real scheduler (reporting to obs, when given). It also returns the scorer
// for direct comparisons.
func neuralBackend(t *testing.T, sc scheduler.Config, obs ...scheduler.Observer) (*scoring.Neural, *rerank.Scorer) {
	t.Helper()
	dir := fixture.Model(t, arch.Tiny(), 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	o := model.DefaultOptions()
	o.RuntimeLib = testenv.ORTLib()
	s, _, err := model.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var observer scheduler.Observer
	if len(obs) > 0 {
		observer = obs[0]
	}
	sched, err := scheduler.New(s.Engine(), sc, observer)
	if err != nil {
		t.Fatal(err)
	}
	return scoring.NewNeural("tiny-test", s, sched, o.Scorer.Prompt.MaxLength), s
}

// TestEndToEndTinyModel: the real server, scheduler and ONNX model answer
// concurrent requests with exactly the scores of scoring each request
// directly, and the documented extensions work.
func TestEndToEndTinyModel(t *testing.T) {
	b, direct := neuralBackend(t, scheduler.DefaultConfig())
	url := start(t, DefaultConfig(), b) + "/rerank"
	docs := []string{"Caroline went to the support group.", "Melanie painted a sunset.", "We adopted a cat named Luna last spring after a long search.", "x"}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := fmt.Sprintf("What did person %d do?", i)
			r := postJSON(t, url, fmt.Sprintf(`{"query":%q,"documents":["%s","%s","%s","%s"],"raw_scores":true}`, q, docs[0], docs[1], docs[2], docs[3]))
			if r.code != 200 {
				t.Errorf("status %d %s", r.code, r.body)
				return
			}
			var resp api.RerankResponse
			decodeInto(t, r, &resp)
			want, err := direct.Score(context.Background(), rerank.Request{Query: q, Docs: docs, MaxDocTokens: DefaultConfig().MaxTokensPerDoc})
			if err != nil {
				t.Error(err)
				return
			}
			for _, res := range resp.Results {
				if math.Abs(res.RelevanceScore-want[res.Index].Logit) > 1e-5 {
					t.Errorf("request %d doc %d: served logit %.6f, direct %.6f", i, res.Index, res.RelevanceScore, want[res.Index].Logit)
				}
			}
			if resp.Backend != "onnx" || resp.Usage.TotalTokens == 0 {
				t.Errorf("envelope %+v", resp)
			}
		}()
	}
	wg.Wait()
	// Truncation per request never fails the others; truncate=false makes
	// an over-long text a 413.
	long := fmt.Sprintf("%0800d", 0)
	r := postJSON(t, url, fmt.Sprintf(`{"query":"q","documents":["short","%s"],"max_tokens_per_doc":8}`, long))
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	if r.code != 200 || len(resp.Results) != 2 {
		t.Fatalf("truncating request: %d %s", r.code, r.body)
	}
	for _, res := range resp.Results {
		if res.Index == 1 && !res.Truncated {
			t.Error("long document not marked truncated")
		}
	}
	checkError(t, postJSON(t, url, fmt.Sprintf(`{"query":"q","texts":["short","%s"],"truncate":false,"max_tokens_per_doc":8}`, long)), 413, KindTooLarge)
	// Context and instruction change the prompt, so the score.
	plain := postJSON(t, url, `{"query":"when?","documents":["On 7 May."],"raw_scores":true}`)
	withCtx := postJSON(t, url, `{"query":"when?","documents":["On 7 May."],"raw_scores":true,"context":["Caroline: I went to the group."],"instruction":"Find the date"}`)
	if string(plain.body) == "" || plainScore(t, plain) == plainScore(t, withCtx) {
		t.Error("context/instruction did not change the score")
	}
}

func plainScore(t *testing.T, r response) float64 {
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	return resp.Results[0].RelevanceScore
}

// TestEndToEndLexical: the embedded default answers with sensible ranks.
func TestEndToEndLexical(t *testing.T) {
	url := start(t, DefaultConfig(), scoring.NewLexical(lexical.Default())) + "/rerank"
	r := postJSON(t, url, `{"query":"Caroline support group","documents":["Melanie painted a sunset","Caroline went to the LGBTQ support group","the group"]}`)
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	if r.code != 200 || resp.Backend != "lexical-bm25" || resp.Results[0].Index != 1 || resp.Results[2].Index != 0 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	for _, res := range resp.Results {
		if res.RelevanceScore <= 0 || res.RelevanceScore >= 1 {
			t.Errorf("score %v outside (0,1)", res.RelevanceScore)
		}
	}
}
