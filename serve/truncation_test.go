package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/scoring"
)

// TestConfigMaxTokensPerDocZero: 0 means no per-document cut and is valid;
// negative is not.
func TestConfigMaxTokensPerDocZero(t *testing.T) {
	c := DefaultConfig()
	c.MaxTokensPerDoc = 0
	if err := c.Validate(); err != nil {
		t.Errorf("max tokens per doc 0: %v", err)
	}
	c.MaxTokensPerDoc = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max tokens per document") {
		t.Errorf("max tokens per doc -1: %v", err)
	}
}

func TestDocLimit(t *testing.T) {
	for _, c := range []struct{ server, request, want int }{
		{0, 0, 0}, {0, 8, 8}, {512, 0, 512}, {512, 8, 8}, {8, 512, 8}, {512, math.MaxInt, 512},
	} {
		if got := docLimit(c.server, c.request); got != c.want {
			t.Errorf("docLimit(%d, %d) = %d, want %d", c.server, c.request, got, c.want)
		}
	}
}

// TestInfoTruncation: /info reports the limits and why: the measured
// default, the operator's choice, or no limit for a backend without one.
func TestInfoTruncation(t *testing.T) {
	info := func(cfg Config, b scoring.Backend) api.Info {
		var in api.Info
		decodeInto(t, do(t, http.MethodGet, start(t, cfg, b)+"/info", "", ""), &in)
		return in
	}
	in := info(DefaultConfig(), &fakeBackend{})
	tr := in.Truncation
	if tr == nil || tr.MaxLength != 1024 || tr.MaxTokensPerDoc != 0 || tr.PerDocCut || tr.ModelCardMaxLength != 8192 ||
		tr.Reason != DefaultTruncationReason || tr.Docs != TruncationDocs || in.MaxTokensPerDoc != 0 {
		t.Errorf("default truncation %+v", tr)
	}
	cfg := DefaultConfig()
	cfg.MaxTokensPerDoc = 300
	tr = info(cfg, &fakeBackend{}).Truncation
	if tr == nil || !tr.PerDocCut || tr.MaxTokensPerDoc != 300 || !strings.Contains(tr.Reason, "set by the operator") ||
		!strings.Contains(tr.Reason, "documents cut at 300 tokens") {
		t.Errorf("operator truncation %+v", tr)
	}
	tr = info(DefaultConfig(), scoring.NewLexical(lexical.Default())).Truncation
	if tr == nil || tr.MaxLength != 0 || !strings.Contains(tr.Reason, "never cut") || tr.Source != SourceNone {
		t.Errorf("lexical truncation %+v", tr)
	}
}

// TestTruncationSource: /info says where the limit came from. A
// cross-encoder (serve.Config.ModelMaxLength set) cut at its own
// positions reports the model as the source and no Qwen model-card
// length; below them, the operator; Qwen models keep the default's
// reason and the card's 8192.
func TestTruncationSource(t *testing.T) {
	const from = "config.json max_position_embeddings 512"
	for _, c := range []struct {
		name                 string
		modelMax, maxLength  int
		perDoc               int
		source               string
		card, model          int
		reasonHas, reasonNot string
	}{
		{"qwen default", 0, 1024, 0, SourceDefault, 8192, 0, "latency over fidelity", "set by the operator"},
		{"qwen operator", 0, 4096, 0, SourceOperator, 8192, 0, "set by the operator (--max-length 4096", ""},
		{"encoder at its positions", 512, 512, 0, SourceModel, 0, 512, "the model's own limit: 512 tokens (" + from + ")", "operator"},
		{"encoder below its positions", 512, 256, 0, SourceOperator, 0, 512, "the model takes up to 512", "model card"},
		{"encoder with a per-document cut", 512, 512, 100, SourceOperator, 0, 512, "documents cut at 100 tokens", "model card"},
		{"lexical", 0, 0, 0, SourceNone, 0, 0, "never cut", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.ModelMaxLength, cfg.ModelMaxLengthFrom, cfg.MaxTokensPerDoc = c.modelMax, from, c.perDoc
			if c.modelMax == 0 {
				cfg.ModelMaxLengthFrom = ""
			}
			tr := truncationInfo(cfg, c.maxLength)
			if tr.Source != c.source || tr.ModelCardMaxLength != c.card || tr.ModelMaxLength != c.model ||
				!strings.Contains(tr.Reason, c.reasonHas) || c.reasonNot != "" && strings.Contains(tr.Reason, c.reasonNot) {
				t.Errorf("%+v; want source %s, card %d, model %d, reason with %q without %q", tr, c.source, c.card, c.model, c.reasonHas, c.reasonNot)
			}
		})
	}
}

// TestTruncatedHonest: on the real tiny model, a document cut only by the
// prompt's maximum length (no per-document cut configured) is marked
// truncated; one that fits is not, and is scored whole (as the direct
// scorer scores it without a cut); a request's own max_tokens_per_doc
// still applies when the server has no per-document cut.
func TestTruncatedHonest(t *testing.T) {
	b, direct := neuralBackend(t, scheduler.DefaultConfig())
	url := start(t, DefaultConfig(), b) + "/rerank"
	long := strings.Repeat("garden river stone ", 500) // ~1500 tokens: past max-length 1024
	mid := strings.Repeat("apple cloud ", 300)         // ~600 tokens: past the old 512 cut, within 1024
	docs := []string{"short", mid, long}
	r := postJSON(t, url, fmt.Sprintf(`{"query":"what grows?","documents":[%q,%q,%q],"raw_scores":true}`, docs[0], docs[1], docs[2]))
	if r.code != 200 {
		t.Fatalf("status %d %s", r.code, r.body)
	}
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	want, err := direct.Score(context.Background(), rerank.Request{Query: "what grows?", Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	if want[1].Truncated || want[1].Tokens <= 512 || !want[2].Truncated || want[2].Tokens != 1024 {
		t.Fatalf("direct scores %+v", want)
	}
	for _, res := range resp.Results {
		if res.Truncated != want[res.Index].Truncated {
			t.Errorf("doc %d: served truncated %v, want %v", res.Index, res.Truncated, want[res.Index].Truncated)
		}
		if math.Abs(res.RelevanceScore-want[res.Index].Logit) > 1e-5 {
			t.Errorf("doc %d: served logit %.6f, direct %.6f", res.Index, res.RelevanceScore, want[res.Index].Logit)
		}
	}
	if len(resp.Results) != 3 {
		t.Fatalf("results %+v", resp.Results)
	}
	r = postJSON(t, url, fmt.Sprintf(`{"query":"what grows?","documents":["short",%q],"max_tokens_per_doc":8}`, mid))
	var cut api.RerankResponse
	decodeInto(t, r, &cut)
	if len(cut.Results) != 2 {
		t.Fatalf("results %+v", cut.Results)
	}
	for _, res := range cut.Results {
		if res.Truncated != (res.Index == 1) {
			t.Errorf("max_tokens_per_doc 8 on a server without a per-document cut: doc %d truncated %v", res.Index, res.Truncated)
		}
	}
}
