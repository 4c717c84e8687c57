package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/embed"
)

// embedServer is `rerankd serve` with an embedder, built in-process: the
// embedding routes and the memory search share the queue.
type embedServer struct {
	url string
	mem *retrieval.Service
	q   *embed.Queue
}

// startEmbedServer starts `rerankd serve` with args in-process; tok, when
// set, is the encoder tokenizer (for an XLM-R / BERT folder).
func startEmbedServer(t testing.TB, tok model.EncoderTokenizer, args ...string) embedServer {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := servecmd.DefineFlags(fs)
	if _, err := servecmd.Parse(fs, f, append([]string{"--threads", "2", "--ort-lib", testenv.ORTLib()}, args...), io.Discard); err != nil {
		t.Fatal(err)
	}
	f.Cfg.Log, f.Cfg.Notices = slog.New(slog.DiscardHandler), io.Discard
	f.Cfg.Tuning.EncoderTokenizer = tok
	a, err := app.Build(f.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	return embedServer{url: "http://" + ln.Addr().String(), mem: a.Memory, q: a.Embedder}
}

// embedFolders writes the two embedder classes' folders once per test:
// Qwen3-Embedding (decoder, last-token pooling) and BGE-M3 style (XLM-R
// encoder, CLS pooling), with seeded random weights.
func embedFolders(t *testing.T) (qwen, xlmr string) {
	t.Helper()
	tmp := t.TempDir()
	qwen = filepath.Join(tmp, "qwen3-embed")
	if code, _, errs := runCLI(t, "testmodel", "--kind", "embedding", "--size", "tiny", "--seed", "3", "--out", qwen); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	src := filepath.Join(tmp, "bge-ckpt")
	xlmr = filepath.Join(tmp, "bge-m3-tiny")
	if code, _, errs := runCLI(t, "testmodel", "--arch", "xlmr", "--kind", "embedding", "--out", src); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "convert", "--from", src, "--out", xlmr, "--quant", "none"); code != 0 {
		t.Fatal(errs)
	}
	return qwen, xlmr
}

// bertEmbedFolder writes a sentence-transformers BERT bi-encoder folder
// (all-MiniLM style, mean pooling) with seeded random weights.
func bertEmbedFolder(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	src, dir := filepath.Join(tmp, "bert-ckpt"), filepath.Join(tmp, "minilm-tiny")
	if code, _, errs := runCLI(t, "testmodel", "--arch", "bert", "--kind", "embedding", "--out", src); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "convert", "--from", src, "--out", dir, "--quant", "none"); code != 0 {
		t.Fatal(errs)
	}
	return dir
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// TestServeEmbeddingsParity: for each embedder class (Qwen3-Embedding,
// BGE-M3 dense on XLM-R, a BERT bi-encoder), /v1/embeddings
// (float and base64) and /embed give, to 1e-6, the vectors the memory
// search stores for the same text (documents) and searches with
// (input_type query, prompt_name query), and match the plain-Go
// reference pass of the class within 1e-5. Random weights: this checks
// the wiring and the numbers, not retrieval quality.
func TestServeEmbeddingsParity(t *testing.T) {
	qwen, xlmr := embedFolders(t)
	texts := []string{"alice adopted a cat in june", "bob painted the fence blue on saturday", "alice moved to berlin"}
	for _, tc := range []struct {
		name, dir string
		tok       model.EncoderTokenizer
	}{
		{"qwen3-embedding", qwen, nil},
		{"bge-m3-dense", xlmr, tokentest.FakeXLMR(100)},
		{"bert-bi-encoder", bertEmbedFolder(t), tokentest.FakeBERT(100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startEmbedServer(t, tc.tok, "--embed-model", tc.dir, "--store", filepath.Join(t.TempDir(), "mem.db"))
			mems := make([]map[string]string, len(texts))
			for i, x := range texts {
				mems[i] = map[string]string{"text": x, "id": fmt.Sprintf("m%d", i)}
			}
			if code, body := postJSON(t, s.url+"/v1/memories", map[string]any{"namespace": "alice", "memories": mems}, nil); code != http.StatusOK && code != http.StatusCreated {
				t.Fatalf("add: %d %s", code, body)
			}
			var fl, b64 api.EmbeddingsResponse
			if code, body := postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": texts, "model": "whatever"}, &fl); code != 200 {
				t.Fatalf("/v1/embeddings: %d %s", code, body)
			}
			if code, body := postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": texts, "encoding_format": "base64"}, &b64); code != 200 {
				t.Fatalf("/v1/embeddings base64: %d %s", code, body)
			}
			var tei [][]float32
			if code, body := postJSON(t, s.url+"/embed", map[string]any{"inputs": texts}, &tei); code != 200 {
				t.Fatalf("/embed: %d %s", code, body)
			}
			if fl.Object != "list" || fl.Model != filepath.Base(tc.dir) || len(fl.Data) != len(texts) || fl.Usage.PromptTokens < len(texts) || fl.Usage.TotalTokens != fl.Usage.PromptTokens {
				t.Fatalf("envelope: object %q model %q, %d vectors, usage %+v", fl.Object, fl.Model, len(fl.Data), fl.Usage)
			}
			// /info says where the input limit came from.
			resp, err := http.Get(s.url + "/info")
			if err != nil {
				t.Fatal(err)
			}
			var inf api.Info
			err = json.NewDecoder(resp.Body).Decode(&inf)
			_ = resp.Body.Close()
			wantFrom := map[string]string{"qwen3-embedding": "rerankd's default", "bge-m3-dense": "max_position_embeddings", "bert-bi-encoder": "max_position_embeddings"}[tc.name]
			if err != nil || inf.Embedder == nil || inf.Embedder.MaxInputTokens < 2 || !strings.Contains(inf.Embedder.MaxInputTokensFrom, wantFrom) {
				t.Errorf("/info embedder %+v (%v): want max_input_tokens_from naming %q", inf.Embedder, err, wantFrom)
			}
			// The reference pass of the class, on the same folder.
			o := model.DefaultEmbedderOptions()
			o.Engine, o.EncoderTokenizer = model.EngineReference, tc.tok
			ref, err := model.OpenEmbedder(tc.dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close() //nolint:errcheck // test
			refDocs, err := ref.Embed(t.Context(), texts, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range texts {
				rec, err := s.mem.Get("alice", fmt.Sprintf("m%d", i))
				if err != nil {
					t.Fatal(err)
				}
				v := fl.Data[i].Embedding.Values
				if fl.Data[i].Index != i || fl.Data[i].Object != "embedding" || !b64.Data[i].Embedding.Base64 {
					t.Errorf("element %d: %+v", i, fl.Data[i])
				}
				if d := maxDiff(v, rec.Vector); d > 1e-6 {
					t.Errorf("text %d: /v1/embeddings vs the stored vector: max diff %g", i, d)
				}
				if d := maxDiff(b64.Data[i].Embedding.Values, v); d != 0 {
					t.Errorf("text %d: base64 vs float: max diff %g", i, d)
				}
				if d := maxDiff(tei[i], v); d > 1e-6 {
					t.Errorf("text %d: /embed vs /v1/embeddings: max diff %g", i, d)
				}
				if d := maxDiff(v, refDocs[i]); d > 1e-5 {
					t.Errorf("text %d: vs the reference pass: max diff %g", i, d)
				}
			}
			// Queries: what the memory search embeds a query with.
			q := "where does alice live"
			direct, err := s.q.Embed(t.Context(), []string{q}, true)
			if err != nil {
				t.Fatal(err)
			}
			var fq api.EmbeddingsResponse
			if code, body := postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": q, "input_type": "query"}, &fq); code != 200 {
				t.Fatalf("query: %d %s", code, body)
			}
			var tq [][]float32
			if code, body := postJSON(t, s.url+"/embed", map[string]any{"inputs": q, "prompt_name": "query"}, &tq); code != 200 {
				t.Fatalf("/embed query: %d %s", code, body)
			}
			refQ, err := ref.Embed(t.Context(), []string{q}, true)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(fq.Data[0].Embedding.Values, direct[0]); d > 1e-6 {
				t.Errorf("query: /v1/embeddings vs the memory search: %g", d)
			}
			if d := maxDiff(tq[0], direct[0]); d > 1e-6 {
				t.Errorf("query: /embed vs the memory search: %g", d)
			}
			if d := maxDiff(fq.Data[0].Embedding.Values, refQ[0]); d > 1e-5 {
				t.Errorf("query: vs the reference pass: %g", d)
			}
		})
	}
}

// TestServeEmbeddingsOptions: dimensions (Matryoshka: the Qwen3 class
// only), normalize=false, /v1/models with aliases, the answered model
// name on both routes, strict model names, and /tokenize.
func TestServeEmbeddingsOptions(t *testing.T) {
	qwen, xlmr := embedFolders(t)
	rer := filepath.Join(t.TempDir(), "qwen3-reranker-tiny")
	if code, _, errs := runCLI(t, "testmodel", "--size", "tiny", "--seed", "2", "--out", rer); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	s := startEmbedServer(t, nil, "--model", rer, "--embed-model", qwen, "--store", "none", "--embed-served-model-name", "qwen-embed,text-embedding-3-small")
	var full, short api.EmbeddingsResponse
	postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": "a memory about cats"}, &full)
	if code, body := postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": "a memory about cats", "dimensions": 16}, &short); code != 200 {
		t.Fatalf("dimensions: %d %s", code, body)
	}
	v, w := full.Data[0].Embedding.Values, short.Data[0].Embedding.Values
	if len(w) != 16 || full.Model != "qwen-embed" {
		t.Fatalf("dimensions 16: %d values, model %q", len(w), full.Model)
	}
	var norm float64
	for _, x := range v[:16] {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	for i := range w {
		if d := math.Abs(float64(w[i]) - float64(v[i])/norm); d > 1e-6 {
			t.Fatalf("dimensions: value %d is %v, want the re-normalised prefix %v", i, w[i], float64(v[i])/norm)
		}
	}
	var raw [][]float32
	postJSON(t, s.url+"/embed", map[string]any{"inputs": []string{"a memory about cats"}, "normalize": false}, &raw)
	var rn float64
	for _, x := range raw[0] {
		rn += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(rn)-1) < 1e-3 || maxDiff(scaled(raw[0]), v) > 1e-5 {
		t.Errorf("normalize=false: norm %v; its direction must be the normalised vector's", math.Sqrt(rn))
	}
	var models api.ModelList
	resp, err := http.Get(s.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID+"/"+m.Task+"/"+m.Root)
	}
	if got := strings.Join(ids, " "); !strings.Contains(got, "qwen-embed/embed/qwen-embed") || !strings.Contains(got, "text-embedding-3-small/embed/qwen-embed") ||
		!strings.Contains(got, "qwen3-reranker-tiny/rerank/qwen3-reranker-tiny") {
		t.Errorf("/v1/models: %s", got)
	}
	var tok api.TokenizeResponse
	if code, body := postJSON(t, s.url+"/tokenize", map[string]any{"prompt": "a memory about cats"}, &tok); code != 200 || tok.Count != full.Usage.PromptTokens || len(tok.Tokens) != tok.Count {
		t.Errorf("/tokenize: %d %s; usage %d", code, body, full.Usage.PromptTokens)
	}

	// A [query, document] pair: the reranker's whole prompt, as many
	// tokens as /rerank bills for that document.
	var pairTok [][]api.Token
	if code, body := postJSON(t, s.url+"/tokenize", map[string]any{"inputs": [][]string{{"where does alice live", "alice moved to berlin"}}}, &pairTok); code != 200 || len(pairTok) != 1 {
		t.Fatalf("/tokenize pair: %d %s", code, body)
	}
	var billed api.RerankResponse
	postJSON(t, s.url+"/rerank", map[string]any{"query": "where does alice live", "documents": []string{"alice moved to berlin"}}, &billed)
	if len(pairTok[0]) != billed.Usage.TotalTokens || billed.Model != "qwen3-reranker-tiny" || pairTok[0][0].Text == "" {
		t.Errorf("/tokenize pair: %d tokens (first %+v); /rerank billed %d as model %q", len(pairTok[0]), pairTok[0][0], billed.Usage.TotalTokens, billed.Model)
	}

	// The BGE-M3 class is not trained for shorter vectors: 400 naming it.
	x := startEmbedServer(t, tokentest.FakeXLMR(100), "--embed-model", xlmr, "--store", "none", "--strict-model-name")
	code, body := postJSON(t, x.url+"/v1/embeddings", map[string]any{"input": "cats", "dimensions": 8}, nil)
	if code != 400 || !strings.Contains(body, `"param":"dimensions"`) || !strings.Contains(body, "bge-m3-tiny") || !strings.Contains(body, "Matryoshka") {
		t.Errorf("dimensions on an encoder: %d %s", code, body)
	}
	code, body = postJSON(t, x.url+"/v1/embeddings", map[string]any{"input": "cats", "model": "text-embedding-3-small"}, nil)
	if code != 404 || !strings.Contains(body, `"code":"model_not_found"`) {
		t.Errorf("strict, unknown model: %d %s", code, body)
	}
	code, body = postJSON(t, x.url+"/rerank", map[string]any{"query": "cats", "documents": []string{"a"}, "model": "rerank-english-v3.0"}, nil)
	if code != 404 || !strings.Contains(body, "model_not_found") {
		t.Errorf("strict, unknown reranker: %d %s", code, body)
	}
	// Not strict: the served model answers and says so.
	var rr api.RerankResponse
	if code, body := postJSON(t, s.url+"/rerank", map[string]any{"query": "cats", "documents": []string{"a"}, "model": "rerank-english-v3.0"}, &rr); code != 200 || rr.Model == "rerank-english-v3.0" || rr.Model == "" {
		t.Errorf("rerank model: %d %s", code, body)
	}
}

// scaled returns v at unit length.
func scaled(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}
