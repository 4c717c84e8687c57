package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/serve"
)

// encoderServer converts `testmodel --arch a` and serves it on a local
// port with tok encoding its text; it returns the base URL and the folder.
func encoderServer(t *testing.T, a string, tok model.EncoderTokenizer) (string, string) {
	t.Helper()
	src, dir := filepath.Join(t.TempDir(), "ckpt"), filepath.Join(t.TempDir(), "served")
	if code, _, errs := runCLI(t, "testmodel", "--arch", a, "--out", src, "--seed", "3"); code != 0 {
		t.Fatalf("testmodel --arch %s: %s", a, errs)
	}
	if code, _, errs := runCLI(t, "convert", "--from", src, "--out", dir, "--quant", "none"); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	built := buildServe(t, func(c *app.Config) { c.Tuning.EncoderTokenizer = tok },
		"--model", dir, "--threads", "2", "--store", "none", "--ort-lib", testenv.ORTLib())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = built.Server.Serve(ln) }()
	t.Cleanup(func() { _ = built.Shutdown(t.Context()) })
	return "http://" + ln.Addr().String(), dir
}

func postJSON(t *testing.T, url string, body any, out any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // read below
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
	}
	return resp.StatusCode, string(data)
}

// TestServeEncoderReranker: a BERT / XLM-R cross-encoder converted from a
// generated checkpoint serves /rerank with the reference engine's scores
// (within 1e-4), raw_scores gives the logits, truncated marks the pair cut
// to the model's positions, and a request with a prompt part is a 400
// naming the model. /info names the class. (How a request splits into
// engine calls is TestEncoderEngineCalls'.)
func TestServeEncoderReranker(t *testing.T) {
	docs := []string{"alice met bob at the cafe", "bob", strings.Repeat("long ", 300), "a sunny tuesday in june"}
	query := "where did alice meet bob"
	for _, tc := range []struct {
		arch, class string
		tok         func(vocab int) *tokentest.Encoder
	}{
		{"xlmr", "XLMRobertaForSequenceClassification", tokentest.FakeXLMR},
		{"bert", "BertForSequenceClassification", tokentest.FakeBERT},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			// testmodel's tiny encoders have the tiny vocabulary.
			tok := tc.tok(100)
			url, dir := encoderServer(t, tc.arch, tok)
			o := model.DefaultOptions()
			o.Engine, o.EncoderTokenizer = model.EngineReference, tok
			ref, info, err := model.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close() //nolint:errcheck // test
			want, err := ref.Score(t.Context(), rerank.Request{Query: query, Docs: docs})
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range []bool{false, true} {
				var got api.RerankResponse
				if code, body := postJSON(t, url+"/rerank", map[string]any{"query": query, "texts": nil,
					"documents": docsJSON(docs), "raw_scores": raw}, &got); code != http.StatusOK {
					t.Fatalf("raw_scores %v: %d %s", raw, code, body)
				}
				if len(got.Results) != len(docs) {
					t.Fatalf("%d results for %d documents", len(got.Results), len(docs))
				}
				for _, r := range got.Results {
					w := want[r.Index].Score
					if raw {
						w = want[r.Index].Logit
					}
					if d := math.Abs(r.RelevanceScore - w); d > 1e-4 {
						t.Errorf("raw %v doc %d: served %v, reference %v", raw, r.Index, r.RelevanceScore, w)
					}
					if r.Truncated != (r.Index == 2) {
						t.Errorf("doc %d: truncated %v", r.Index, r.Truncated)
					}
				}
			}
			for name, body := range map[string]map[string]any{
				"instruction": {"query": query, "documents": docsJSON(docs), "instruction": "judge relevance"},
				"context":     {"query": query, "documents": docsJSON(docs), "context": []string{"earlier turn"}},
			} {
				code, resp := postJSON(t, url+"/rerank", body, nil)
				if code != http.StatusBadRequest || !strings.Contains(resp, dir) || !strings.Contains(resp, "no prompt") {
					t.Errorf("%s: %d %s, want 400 naming the model", name, code, resp)
				}
			}
			var inf api.Info
			resp, err := http.Get(url + "/info")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close() //nolint:errcheck // test
			if err := json.NewDecoder(resp.Body).Decode(&inf); err != nil {
				t.Fatal(err)
			}
			if inf.Architecture != tc.class || inf.Template != nil || inf.MaxTokens != info.MaxLength {
				t.Errorf("/info: architecture %q template %v max tokens %d, want %s, none, %d", inf.Architecture, inf.Template, inf.MaxTokens, tc.class, info.MaxLength)
			}
			// The default --max-length (1024) is above the tiny model's
			// positions: the limit is the model's, named as such, with no
			// Qwen model-card figure.
			if tr := inf.Truncation; tr == nil || tr.Source != serve.SourceModel || tr.ModelCardMaxLength != 0 ||
				tr.ModelMaxLength != info.Encoder.MaxTokens() || tr.MaxLength != info.MaxLength ||
				!strings.Contains(tr.ModelMaxLengthFrom, "max_position_embeddings") || strings.Contains(tr.Reason, "set by the operator") {
				t.Errorf("/info truncation %+v: want the model's own limit %d from its positions", tr, info.Encoder.MaxTokens())
			}
			if inf.Engine != nil && inf.Engine.PrefixCacheMB != 0 {
				t.Errorf("/info engine reports prefix_cache_mb %d for a cross-encoder, which has no prefix cache", inf.Engine.PrefixCacheMB)
			}
			listed := false
			for _, c := range inf.SupportedModels {
				listed = listed || c.Architecture == tc.class && len(c.Examples) > 0
			}
			if !listed {
				t.Errorf("/info supported_models %v lacks %s", inf.SupportedModels, tc.class)
			}
		})
	}
}

func docsJSON(docs []string) []map[string]string {
	out := make([]map[string]string, len(docs))
	for i, d := range docs {
		out[i] = map[string]string{"text": d}
	}
	return out
}

// TestEncoderEngineCalls: the scheduler budgets an encoder by rows x
// longest row; a request of pairs of one length is one engine call, and
// one of pairs from 4 to 23 tokens is split where padding would pass the
// pad ratio, into the calls the scorer plans for the same pairs.
func TestEncoderEngineCalls(t *testing.T) {
	src, dir := filepath.Join(t.TempDir(), "ckpt"), filepath.Join(t.TempDir(), "served")
	if code, _, errs := runCLI(t, "testmodel", "--arch", "bert", "--out", src); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "convert", "--from", src, "--out", dir, "--quant", "none"); code != 0 {
		t.Fatal(errs)
	}
	a := buildServe(t, func(c *app.Config) { c.Tuning.EncoderTokenizer = tokentest.FakeBERT(100) },
		"--model", dir, "--threads", "2", "--store", "none", "--ort-lib", testenv.ORTLib())
	defer a.Close(t.Context()) //nolint:errcheck // test
	backend, scorer := a.Backend, a.Scorer
	eng, ok := scorer.Engine().(*model.EncoderEngine)
	if !ok {
		t.Fatalf("engine %T, want *model.EncoderEngine", scorer.Engine())
	}
	if got := eng.Cost([][]int{{1, 2}, {1, 2, 3, 4, 5}, {1}}); got != 15 {
		t.Errorf("cost of rows 2, 5, 1: %d, want 3 x 5", got)
	}
	for _, tc := range []struct {
		name string
		doc  func(i int) string
		many bool
	}{
		{"one length", func(int) string { return "memory memory memory" }, false},
		{"4 to 23 tokens", func(i int) string { return strings.Repeat("memory ", 1+i) }, true},
	} {
		docs := make([]string, 20)
		for i := range docs {
			docs[i] = tc.doc(i)
		}
		req := rerank.Request{Query: "q", Docs: docs}
		out, err := backend.Score(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		prompts, err := scorer.Prompts(req)
		if err != nil {
			t.Fatal(err)
		}
		if planned := len(scorer.Batches(prompts)); out.Batches != planned || (out.Batches > 1) != tc.many {
			t.Errorf("%s: %d engine calls, the scorer plans %d; want several: %v", tc.name, out.Batches, planned, tc.many)
		}
	}
}

// TestServeEncoderMemory: a BGE-M3-style embedding folder (testmodel
// --arch xlmr --kind embedding, converted) gives /v1/search its vectors
// (mode dense answers), and an XLM-R cross-encoder reranks the results
// with the reference engine's scores. Random weights: this checks the
// wiring, not retrieval quality.
func TestServeEncoderMemory(t *testing.T) {
	tmp := t.TempDir()
	conv := func(name string, args ...string) string {
		src, dir := filepath.Join(tmp, name+"-ckpt"), filepath.Join(tmp, name)
		if code, _, errs := runCLI(t, append([]string{"testmodel", "--arch", "xlmr", "--out", src}, args...)...); code != 0 {
			t.Fatal(errs)
		}
		if code, _, errs := runCLI(t, "convert", "--from", src, "--out", dir, "--quant", "none"); code != 0 {
			t.Fatal(errs)
		}
		return dir
	}
	rer, emb := conv("reranker"), conv("embed", "--kind", "embedding")
	tok := tokentest.FakeXLMR(100)
	// The encoder tokenizer reaches the reranker and the --embed-model
	// alike, as one Config field (serve and mcp once drifted on it).
	a := buildServe(t, func(c *app.Config) { c.Tuning.EncoderTokenizer = tok },
		"--model", rer, "--embed-model", emb, "--threads", "2", "--store", filepath.Join(tmp, "mem.db"), "--ort-lib", testenv.ORTLib())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	t.Cleanup(func() { _ = a.Shutdown(t.Context()) })
	url := "http://" + ln.Addr().String()
	texts := []string{"alice adopted a cat in june", "bob painted the fence", "alice moved to berlin"}
	mems := make([]map[string]string, len(texts))
	for i, x := range texts {
		mems[i] = map[string]string{"text": x}
	}
	var added api.AddMemoriesResponse
	if code, body := postJSON(t, url+"/v1/memories", map[string]any{"namespace": "alice", "memories": mems}, &added); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("add: %d %s", code, body)
	}
	o := model.DefaultOptions()
	o.Engine, o.EncoderTokenizer = model.EngineReference, tok
	ref, _, err := model.Open(rer, o)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close() //nolint:errcheck // test
	query := "where does alice live"
	want, err := ref.Score(t.Context(), rerank.Request{Query: query, Docs: texts})
	if err != nil {
		t.Fatal(err)
	}
	var got api.SearchResponse
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := postJSON(t, url+"/v1/search", map[string]any{"namespace": "alice", "query": query, "mode": "dense"}, &got)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("search: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := postJSON(t, url+"/v1/search", map[string]any{"namespace": "alice", "query": query, "instruction": "judge"}, nil); code != http.StatusBadRequest || !strings.Contains(body, "no prompt") {
		t.Errorf("search with an instruction: %d %s, want 400 naming the model", code, body)
	}
	if got.Level != "dense" || !got.Reranked || len(got.Results) != len(texts) {
		t.Fatalf("search: level %q reranked %v, %d results", got.Level, got.Reranked, len(got.Results))
	}
	for _, r := range got.Results {
		i := slices.Index(texts, r.Text)
		if d := math.Abs(r.Scores["rerank"] - want[i].Score); i < 0 || d > 1e-4 {
			t.Errorf("%q: rerank score %v, reference %v (scores %v)", r.Text, r.Scores["rerank"], want[max(i, 0)].Score, r.Scores)
		}
	}
}
