package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/msgcheck"
	"github.com/rerankd/rerankd/internal/otlptest"
	"github.com/rerankd/rerankd/retrieval/embed"
)

// fakeEmbedModel gives each text a deterministic unit vector from its
// hash and the prompt it was embedded with; a text counts one token per
// word plus one.
type fakeEmbedModel struct {
	dim        int
	matryoshka bool
	block      chan struct{} // when set, EmbedWith waits for it
}

func (m *fakeEmbedModel) Dim() int { return m.dim }

func (m *fakeEmbedModel) EmbedWith(ctx context.Context, texts []string, o embed.Options) (embed.Result, error) {
	if m.block != nil {
		select {
		case <-m.block:
		case <-ctx.Done():
			return embed.Result{}, ctx.Err()
		}
	}
	if o.PromptName != "" && o.PromptName != "passage" {
		return embed.Result{}, fmt.Errorf("%w %q", embed.ErrUnknownPrompt, o.PromptName)
	}
	dim := m.dim
	if o.Dim > 0 {
		dim = o.Dim
	}
	res := embed.Result{}
	for _, t := range texts {
		ids, _, err := m.tokens(ctx, t, o)
		if err != nil {
			return embed.Result{}, err
		}
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%v|%s|%s", o.Query, o.PromptName, t)
		seed := h.Sum64()
		v := make([]float32, dim)
		var n float64
		for i := range v {
			seed = seed*6364136223846793005 + 1442695040888963407
			v[i] = float32(int64(seed>>33)%1000) / 1000
			n += float64(v[i]) * float64(v[i])
		}
		if !o.Raw {
			for i := range v {
				v[i] = float32(float64(v[i]) / math.Sqrt(n))
			}
		}
		res.Vectors = append(res.Vectors, v)
		res.Tokens = append(res.Tokens, len(ids))
	}
	return res, nil
}

func (m *fakeEmbedModel) tokens(_ context.Context, t string, o embed.Options) ([]int, bool, error) {
	n := len(strings.Fields(t)) + 1
	if o.NoTruncate && n > 8 {
		return nil, false, fmt.Errorf("%w: %d tokens, the limit is 8", embed.ErrTooLong, n)
	}
	ids := make([]int, min(n, 8))
	for i := range ids {
		ids[i] = i + 1
	}
	return ids, n > 8, nil
}

// withFakeEmbedder serves a fake embedder (queue of queueSize texts)
// named names.
func withFakeEmbedder(t testing.TB, m *fakeEmbedModel, queueSize int, names ...string) func(*Server) {
	return func(s *Server) {
		q, err := embed.NewQueue(m, embed.QueueConfig{QueueSize: queueSize, Workers: 1}, s.metrics)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			names = []string{"fake-embed"}
		}
		if err := s.WithEmbedder(EmbedModel{Queue: q, Names: names, MaxLength: 8, QueueSize: queueSize, Matryoshka: m.matryoshka,
			PromptNames: []string{"document", "passage", "query"}, Tokens: m.tokens}); err != nil {
			t.Fatal(err)
		}
	}
}

// openAIErr decodes OpenAI's error shape, failing on anything else.
func openAIErr(t *testing.T, r response) api.OpenAIErrorDetail {
	t.Helper()
	var e api.OpenAIError
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Message == "" || e.Error.Type == "" || e.Error.Code == nil {
		t.Fatalf("status %d body %s: not OpenAI's error shape (%v)", r.code, r.body, err)
	}
	for _, p := range msgcheck.Problems(e.Error.Message) {
		t.Errorf("message %q: %s", e.Error.Message, p)
	}
	return e.Error
}

func TestEmbeddingsOpenAI(t *testing.T) {
	base := start(t, DefaultConfig(), &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 8, matryoshka: true}, 64, "fake-embed", "text-embedding-3-small"))
	var out api.EmbeddingsResponse
	r := postJSON(t, base+"/v1/embeddings", `{"input":["one two","three"],"model":"text-embedding-3-small","user":"u1"}`)
	if r.code != 200 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	decodeInto(t, r, &out)
	if out.Object != "list" || out.Model != "fake-embed" || len(out.Data) != 2 || out.Usage.PromptTokens != 5 || out.Usage.TotalTokens != 5 {
		t.Fatalf("answer %s", r.body)
	}
	for i, d := range out.Data {
		if d.Object != "embedding" || d.Index != i || len(d.Embedding.Values) != 8 || d.Embedding.Base64 {
			t.Errorf("element %d: %+v", i, d)
		}
	}
	// base64: little-endian float32 of the same values.
	var b64 api.EmbeddingsResponse
	r = postJSON(t, base+"/v1/embeddings", `{"input":["one two","three"],"encoding_format":"base64"}`)
	decodeInto(t, r, &b64)
	var raw struct {
		Data []struct {
			Embedding any `json:"embedding"`
		} `json:"data"`
	}
	_ = json.Unmarshal(r.body, &raw)
	if _, ok := raw.Data[0].Embedding.(string); !ok || !b64.Data[0].Embedding.Base64 {
		t.Fatalf("base64 answer: %s", r.body)
	}
	for i := range out.Data {
		for k, x := range out.Data[i].Embedding.Values {
			if b64.Data[i].Embedding.Values[k] != x {
				t.Fatalf("base64 value %d/%d: %v, float %v", i, k, b64.Data[i].Embedding.Values[k], x)
			}
		}
	}
	// A single string; a query; Matryoshka dimensions.
	var q, d api.EmbeddingsResponse
	decodeInto(t, postJSON(t, base+"/v1/embeddings", `{"input":"three","input_type":"query"}`), &q)
	if len(q.Data) != 1 || q.Data[0].Embedding.Values[0] == out.Data[1].Embedding.Values[0] {
		t.Errorf("input_type query must embed with the query prompt: %+v", q.Data)
	}
	decodeInto(t, postJSON(t, base+"/v1/embeddings", `{"input":"three","dimensions":4}`), &d)
	if len(d.Data[0].Embedding.Values) != 4 {
		t.Errorf("dimensions 4: %d values", len(d.Data[0].Embedding.Values))
	}
}

// TestEmbeddingsBadInput: every unacceptable field of /v1/embeddings is a
// 400 in OpenAI's shape naming the field (param); of /embed a 4xx in the
// API's (and TEI's) shape; the server keeps serving.
func TestEmbeddingsBadInput(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEmbedInputs = 4
	base := start(t, cfg, &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 8}, 64))
	for _, c := range []struct {
		name, body string
		code       int
		code2      string // error.code
		param      string
	}{
		{"no input", `{"model":"m"}`, 400, "invalid_request", "input"},
		{"null input", `{"input":null}`, 400, "invalid_request", "input"},
		{"empty array", `{"input":[]}`, 400, "invalid_request", "input"},
		{"empty string", `{"input":""}`, 400, "invalid_request", "input"},
		{"blank element", `{"input":["a","  "]}`, 400, "invalid_request", "input"},
		{"token ids", `{"input":[1,2,3]}`, 400, "invalid_request", "input"},
		{"token id arrays", `{"input":[[1,2],[3]]}`, 400, "invalid_request", "input"},
		{"input number", `{"input":5}`, 400, "validation", "input"},
		{"input object", `{"input":{"text":"a"}}`, 400, "validation", "input"},
		{"element object", `{"input":["a",{"text":"b"}]}`, 400, "validation", "input"},
		{"too many", `{"input":["a","b","c","d","e"]}`, 400, "invalid_request", "input"},
		{"encoding_format", `{"input":"a","encoding_format":"int8"}`, 400, "invalid_request", "encoding_format"},
		{"encoding_format number", `{"input":"a","encoding_format":1}`, 400, "validation", "encoding_format"},
		{"dimensions unsupported", `{"input":"a","dimensions":4}`, 400, "invalid_request", "dimensions"},
		{"dimensions string", `{"input":"a","dimensions":"4"}`, 400, "validation", "dimensions"},
		{"input_type", `{"input":"a","input_type":"passage"}`, 400, "invalid_request", "input_type"},
		{"malformed", `{"input":`, 400, "invalid_request", ""},
		{"user number", `{"input":"a","user":5}`, 400, "validation", "user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := postJSON(t, base+"/v1/embeddings", c.body)
			e := openAIErr(t, r)
			if r.code != c.code || *e.Code != c.code2 || e.Type != "invalid_request_error" {
				t.Errorf("%d %s, want %d code %s", r.code, r.body, c.code, c.code2)
			}
			if c.param != "" && (e.Param == nil || *e.Param != c.param) {
				t.Errorf("param %v, want %q (%s)", e.Param, c.param, r.body)
			}
		})
	}
	if r := do(t, http.MethodPost, base+"/v1/embeddings", "text/plain", `{"input":"a"}`); r.code != 415 || *openAIErr(t, r).Code != "unsupported_media_type" {
		t.Errorf("text/plain: %d %s", r.code, r.body)
	}
	if r := do(t, http.MethodGet, base+"/v1/embeddings", "", ""); r.code != 405 {
		t.Errorf("GET: %d %s", r.code, r.body)
	}
	tei := "application/json"
	for _, c := range []badCase{
		{name: "no inputs", body: `{}`, code: 422, kind: KindValidation},
		{name: "inputs number", body: `{"inputs":5}`, code: 422, kind: KindValidation},
		{name: "empty inputs", body: `{"inputs":[]}`, code: 422, kind: KindValidation},
		{name: "blank", body: `{"inputs":" "}`, code: 422, kind: KindValidation},
		{name: "token ids", body: `{"inputs":[[1,2]]}`, code: 422, kind: KindValidation},
		{name: "too many", body: `{"inputs":["a","b","c","d","e"]}`, code: 422, kind: KindValidation},
		{name: "normalize string", body: `{"inputs":"a","normalize":"no"}`, code: 422, kind: KindValidation},
		{name: "truncate number", body: `{"inputs":"a","truncate":1}`, code: 422, kind: KindValidation},
		{name: "truncation_direction", body: `{"inputs":"a","truncation_direction":"middle"}`, code: 422, kind: KindValidation},
		{name: "prompt_name unknown", body: `{"inputs":"a","prompt_name":"classification"}`, code: 422, kind: KindValidation},
		{name: "prompt_name number", body: `{"inputs":"a","prompt_name":3}`, code: 422, kind: KindValidation},
		{name: "dimensions unsupported", body: `{"inputs":"a","dimensions":4}`, code: 422, kind: KindValidation},
		{name: "too long without truncate", body: `{"inputs":"a b c d e f g h i j"}`, code: 413, kind: KindTooLarge},
		{name: "too long, truncate", body: `{"inputs":"a b c d e f g h i j","truncate":true,"truncation_direction":"Left"}`, code: 200},
		{name: "prompt_name passage", body: `{"inputs":["a"],"prompt_name":"passage","normalize":false}`, code: 200},
		{name: "malformed", body: `{"inputs"`, code: 400, kind: KindInvalid},
	} {
		c.method, c.ctype = http.MethodPost, tei
		t.Run("embed/"+c.name, func(t *testing.T) { checkBad(t, c, send(t, http.DefaultClient, c, base+"/embed")) })
	}
	for _, c := range []badCase{
		{name: "nothing", body: `{}`, code: 422, kind: KindValidation},
		{name: "both", body: `{"inputs":"a","prompt":"b"}`, code: 422, kind: KindValidation},
		{name: "special tokens off", body: `{"inputs":"a","add_special_tokens":false}`, code: 422, kind: KindValidation},
		{name: "pair to the embedder", body: `{"inputs":[["q","d"]],"model":"fake-embed"}`, code: 422, kind: KindValidation},
		{name: "pair, fake reranker has no tokenizer", body: `{"inputs":[["q","d"]]}`, code: 422, kind: KindValidation},
		{name: "texts", body: `{"inputs":["a b","c"]}`, code: 200},
	} {
		c.method, c.ctype = http.MethodPost, tei
		t.Run("tokenize/"+c.name, func(t *testing.T) { checkBad(t, c, send(t, http.DefaultClient, c, base+"/tokenize")) })
	}
	var vecs [][]float32
	decodeInto(t, postJSON(t, base+"/embed", `{"inputs":"a b"}`), &vecs)
	if len(vecs) != 1 || len(vecs[0]) != 8 {
		t.Errorf("after the bad inputs: %v", vecs)
	}
}

// TestEmbeddingsOverload: a full embedding queue answers 429 with
// Retry-After in OpenAI's shape (rate_limit_error); /embed in the API's.
func TestEmbeddingsOverload(t *testing.T) {
	m := &fakeEmbedModel{dim: 4, block: make(chan struct{})}
	base := start(t, DefaultConfig(), &fakeBackend{}, withFakeEmbedder(t, m, 3))
	done := make(chan response, 1)
	go func() { done <- postJSON(t, base+"/v1/embeddings", `{"input":["a","b"]}`) }()
	// Wait until the first request holds 2 of the queue's 3 texts.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(string(do(t, http.MethodGet, base+"/metrics", "", "").body), "rerankd_embed_queue_texts 2") {
		if time.Now().After(deadline) {
			t.Fatal("the first request never reached the queue")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := postJSON(t, base+"/v1/embeddings", `{"input":["c","d"]}`)
	if e := openAIErr(t, r); r.code != 429 || e.Type != "rate_limit_error" || *e.Code != "overloaded" || r.header.Get("Retry-After") == "" {
		t.Errorf("429: %d %s, Retry-After %q", r.code, r.body, r.header.Get("Retry-After"))
	}
	checkError(t, postJSON(t, base+"/embed", `{"inputs":["c","d"]}`), 429, KindOverloaded)
	// More texts than the queue ever holds: 413, not 429 (retrying never helps).
	if r := postJSON(t, base+"/embed", `{"inputs":["a","b","c","d"]}`); r.code != 413 {
		t.Errorf("4 texts, queue of 3: %d %s", r.code, r.body)
	}
	close(m.block)
	if r := <-done; r.code != 200 {
		t.Errorf("the waiting request: %d %s", r.code, r.body)
	}
	// Per-route metrics.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{`rerankd_requests_total{code="429",route="/v1/embeddings"}`, `rerankd_requests_total{code="200",route="/v1/embeddings"}`,
		"rerankd_embed_queue_texts", "rerankd_embedded_texts_total 2"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestModelNames: /v1/models lists both models' names; responses name
// the model that answered; --strict-model-name refuses others with 404.
func TestModelNames(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RerankerNames = []string{"bge-reranker", "rerank-english-v3.0"}
	base := start(t, cfg, &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 4}, 8, "bge-m3"))
	var list api.ModelList
	r := do(t, http.MethodGet, base+"/v1/models", "", "")
	decodeInto(t, r, &list)
	var got []string
	for _, m := range list.Data {
		got = append(got, m.ID+":"+m.Root+":"+m.Task)
		if m.Object != "model" || m.OwnedBy == "" || m.Created == 0 {
			t.Errorf("card %+v", m)
		}
	}
	if want := "bge-reranker:bge-reranker:rerank rerank-english-v3.0:bge-reranker:rerank bge-m3:bge-m3:embed"; strings.Join(got, " ") != want {
		t.Errorf("/v1/models: %v, want %s", got, want)
	}
	var rr api.RerankResponse
	decodeInto(t, postJSON(t, base+"/rerank", `{"query":"q","documents":["a"],"model":"BAAI/bge-reranker-v2-m3"}`), &rr)
	if rr.Model != "bge-reranker" {
		t.Errorf("rerank answered as %q, want the served name", rr.Model)
	}
	var info api.Info
	decodeInto(t, do(t, http.MethodGet, base+"/info", "", ""), &info)
	if info.Embedder == nil || info.Embedder.Names[0] != "bge-m3" || info.Embedder.MaxInputs != cfg.MaxEmbedInputs || info.Embedder.MaxQueueTexts != 8 ||
		len(info.ServedModelNames) != 2 || info.StrictModelName {
		t.Errorf("/info: %+v %+v", info.Embedder, info.ServedModelNames)
	}

	cfg.StrictModelName = true
	strict := start(t, cfg, &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 4}, 8, "bge-m3"))
	for _, c := range []struct{ path, body string }{
		{"/rerank", `{"query":"q","documents":["a"],"model":"BAAI/bge-reranker-v2-m3"}`},
		{"/rerank", `{"query":"q","documents":["a"],"model":"bge-m3"}`},
		{"/v1/embeddings", `{"input":"a","model":"text-embedding-3-small"}`},
	} {
		r := postJSON(t, strict+c.path, c.body)
		if r.code != 404 || !strings.Contains(string(r.body), "model_not_found") || !strings.Contains(string(r.body), "/v1/models") {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.code, r.body)
		}
	}
	for _, c := range []struct{ path, body string }{
		{"/rerank", `{"query":"q","documents":["a"],"model":"rerank-english-v3.0"}`},
		{"/v1/embeddings", `{"input":"a","model":"bge-m3"}`},
		{"/v1/embeddings", `{"input":"a"}`},
	} {
		if r := postJSON(t, strict+c.path, c.body); r.code != 200 {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.code, r.body)
		}
	}
	// Name clashes are refused at start.
	srv, err := New(cfg, &fakeBackend{}, Limits{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := embed.NewQueue(&fakeEmbedModel{dim: 4}, embed.DefaultQueueConfig(), nil)
	if err := srv.WithEmbedder(EmbedModel{Queue: q, Names: []string{"rerank-english-v3.0", ""}}); err == nil ||
		!strings.Contains(err.Error(), "names both") || !strings.Contains(err.Error(), "empty") {
		t.Errorf("clashing names: %v", err)
	}
}

// TestEmbeddingsWithoutEmbedder: the routes say how to get one.
func TestEmbeddingsWithoutEmbedder(t *testing.T) {
	base := start(t, DefaultConfig(), &fakeBackend{})
	r := postJSON(t, base+"/v1/embeddings", `{"input":"a"}`)
	if e := openAIErr(t, r); r.code != 404 || !strings.Contains(e.Message, "--embed-model") {
		t.Errorf("/v1/embeddings: %d %s", r.code, r.body)
	}
	r = postJSON(t, base+"/embed", `{"inputs":"a"}`)
	checkError(t, r, 404, KindNotFound)
	var list api.ModelList
	decodeInto(t, do(t, http.MethodGet, base+"/v1/models", "", ""), &list)
	if len(list.Data) != 1 || list.Data[0].ID != "fake-model" || list.Data[0].Task != "rerank" {
		t.Errorf("/v1/models: %+v", list)
	}
}

// TestTracingEmbeddings: an embedding request has its server span with a
// rerankd.embed child counting inputs and tokens; no text is exported.
func TestTracingEmbeddings(t *testing.T) {
	rcv := otlptest.Start(t)
	cfg, flush := tracedConfig(t, DefaultConfig(), rcv)
	base := start(t, cfg, &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 4}, 16))
	for i, c := range []struct{ path, body string }{
		{"/v1/embeddings", `{"input":["walrus coffee","oat latte"]}`},
		{"/embed", `{"inputs":["walrus coffee","oat latte"]}`},
	} {
		tp, traceID, _ := traceparent(200 + i)
		if r := postJSON(t, base+c.path, c.body, "traceparent", tp); r.code != 200 {
			t.Fatalf("%s: %d %s", c.path, r.code, r.body)
		}
		flush()
		spans := rcv.Spans()
		var srv otlptest.Span
		for _, s := range otlptest.Named(spans, "POST "+c.path) {
			if s.TraceID == traceID {
				srv = s
			}
		}
		if srv.SpanID == "" {
			t.Fatalf("%s: no server span", c.path)
		}
		emb := childrenOf(spans, srv, "rerankd.embed")
		if len(emb) != 1 || emb[0].Attrs["rerankd.inputs"] != "2" || emb[0].Attrs["rerankd.tokens"] != "6" {
			t.Errorf("%s: embed spans %+v", c.path, emb)
		}
	}
	if bytes.Contains(rcv.Raw(), []byte("walrus")) {
		t.Error("input text is in the exported spans")
	}
}
