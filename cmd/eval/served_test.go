package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/scoring"
	"github.com/rerankd/rerankd/serve"
)

// tinyModels writes a generated reranker and embedder (random weights:
// their metrics mean nothing) and returns their folders.
func tinyModels(t testing.TB) (rr, emb string) {
	t.Helper()
	testenv.Require(t, testenv.ORTLib())
	testenv.Require(t, testenv.TokenizerDir())
	dir := t.TempDir()
	rr, emb = filepath.Join(dir, "rr"), filepath.Join(dir, "emb")
	writeTinyReranker(t, rr, 4)
	if err := folder.WriteTestEmbeddingModel(emb, arch.Tiny(), 3, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()}); err != nil {
		t.Fatal(err)
	}
	return rr, emb
}

// writeTinyReranker writes a generated tiny reranker (random weights
// from seed) to dir.
func writeTinyReranker(t testing.TB, dir string, seed uint64) {
	t.Helper()
	if err := folder.WriteTestModel(dir, arch.Tiny(), seed, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()}); err != nil {
		t.Fatal(err)
	}
}

// serveRerankd serves the reranker folder as `rerankd serve --model`
// does: the model, its scheduler, the HTTP server (Cohere and TEI
// routes). It returns the base URL.
func serveRerankd(t testing.TB, dir string) string {
	t.Helper()
	o := model.DefaultOptions()
	o.RuntimeLib, o.Tokenizer = testenv.ORTLib(), testenv.TokenizerDir()
	sc := scheduler.DefaultConfig()
	o.Scorer.BatchTokens, o.Scorer.MaxBatch, o.Scorer.MaxPadRatio = sc.BatchTokens, sc.MaxBatch, sc.MaxPadRatio
	s, _, err := model.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.New(s.Engine(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := scoring.NewNeural("tiny", s, sched, o.Scorer.Prompt.MaxLength)
	srv, err := serve.New(serve.DefaultConfig(), b, serve.Limits{QueueSize: sc.QueueSize, BatchTokens: sc.BatchTokens, MaxBatch: sc.MaxBatch},
		nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = b.Close(ctx)
	})
	return "http://" + ln.Addr().String()
}

// queryMark is what the fake embeddings server reads as "this is a
// question": the OpenAI API has no query side, so eval's
// --embed-query-prefix carries it.
const queryMark = "QUERY\x1f"

// fakeEmbeddings serves POST /v1/embeddings (OpenAI's shape) from the
// embedder folder, in process: an input starting with queryMark is
// embedded as a question. It stands in for rerankd's own route, which
// another change adds.
func fakeEmbeddings(t testing.TB, dir string) string {
	t.Helper()
	eo := model.DefaultEmbedderOptions()
	eo.RuntimeLib, eo.Tokenizer = testenv.ORTLib(), testenv.TokenizerDir()
	e, err := model.OpenEmbedder(dir, eo)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		data := make([]map[string]any, len(req.Input))
		for i, in := range req.Input {
			text, isQuery := strings.CutPrefix(in, queryMark)
			v, err := e.Embed(r.Context(), []string{text}, isQuery)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v[0]}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(func() { srv.Close(); _ = e.Close() })
	return srv.URL
}

// TestServedMatchesInProcess: evaluating a generated reranker and
// embedder through HTTP (rerankd's own Cohere and TEI routes; an OpenAI
// embeddings server around the same embedder) with one request in flight
// writes the very run file that evaluating them in process writes, byte
// for byte; a second served run is answered from the cache, sends
// nothing, and writes it again. With four in flight the server's
// scheduler puts pairs of different questions into one engine call, and
// ONNX float32 sums depend on the batch's shape: the scores agree within
// 1e-6 (serve's determinism tests' tolerance), not bit for bit.
// Each API gets a fresh server: its prefix cache would serve a repeated
// question's prefix from the first run's K/V, which differs in the last
// bits.
func TestServedMatchesInProcess(t *testing.T) {
	rr, emb := tinyModels(t)
	embURL := fakeEmbeddings(t, emb)
	dir := t.TempDir()
	common := []string{"locomo", "--data", fixtures, "--json", "--pipeline", "hybrid+rerank", "--rerank-depth", "20",
		"--ort-lib", testenv.ORTLib(), "--tokenizer", testenv.TokenizerDir()}
	evalRun := func(name string, extra ...string) ([]byte, locomoResult) {
		t.Helper()
		runFile := filepath.Join(dir, name)
		var out, errb bytes.Buffer
		if code := run(append(append(common, "--run", runFile), extra...), &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		var res locomoResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(runFile)
		if err != nil {
			t.Fatal(err)
		}
		return b, res
	}
	want, inProc := evalRun("inprocess.txt", "--model", rr, "--embed-model", emb)
	if len(want) == 0 || inProc.Run == nil || inProc.Run.Reranker == nil || inProc.Run.Reranker.SHA256 == "" {
		t.Fatalf("in-process run: %d bytes, %+v", len(want), inProc.Run)
	}
	for _, api := range []string{"cohere", "tei"} {
		t.Run(api, func(t *testing.T) {
			url := serveRerankd(t, rr)
			cache := filepath.Join(dir, api+".cache")
			served := []string{"--rerank-url", url, "--rerank-api", api, "--rerank-served-model", "tiny",
				"--embed-url", embURL, "--embed-query-prefix", queryMark, "--cache", cache, "--concurrency", "1"}
			got, res := evalRun(api+".txt", served...)
			if !bytes.Equal(got, want) {
				t.Errorf("served run differs from the in-process run:\n%s", firstDiff(want, got))
			}
			if res.Served == nil || res.Served.RerankPairs == 0 || res.Served.EmbedTexts == 0 {
				t.Errorf("served counts %+v: nothing went over HTTP", res.Served)
			}
			if r := res.Run.Reranker; r == nil || r.URL == "" || r.API != api || r.ServedModel != "tiny" {
				t.Errorf("sidecar reranker %+v", r)
			}
			again, res2 := evalRun(api+"-again.txt", served...)
			if !bytes.Equal(again, want) {
				t.Errorf("cached run differs:\n%s", firstDiff(want, again))
			}
			if s := res2.Served; s == nil || s.RerankRequests != 0 || s.EmbedRequests != 0 || s.CacheHits == 0 {
				t.Errorf("second run sent requests: %+v", s)
			}
		})
	}
	t.Run("concurrent", func(t *testing.T) {
		got, _ := evalRun("concurrent.txt", "--rerank-url", serveRerankd(t, rr), "--embed-url", embURL,
			"--embed-query-prefix", queryMark, "--no-cache", "--concurrency", "4")
		a, b := readRunBytes(t, want), readRunBytes(t, got)
		if len(a) != len(b) {
			t.Fatalf("%d questions, want %d", len(b), len(a))
		}
		for q, list := range a {
			scores := map[string]float64{}
			for _, r := range b[q] {
				scores[r.DocID] = r.Score
			}
			for _, r := range list {
				if s, ok := scores[r.DocID]; !ok || math.Abs(s-r.Score) > 1e-6 {
					t.Errorf("%s %s: served %v (found %v), in process %v", q, r.DocID, s, ok, r.Score)
				}
			}
		}
	})
}

func readRunBytes(t *testing.T, b []byte) metrics.Run {
	t.Helper()
	r, err := metrics.ReadRun(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// firstDiff shows the first differing line of two run files.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + itoa(i+1) + ":\n  want " + la[i] + "\n  got  " + lb[i]
		}
	}
	return "lengths " + itoa(len(la)) + " and " + itoa(len(lb)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }

// faultyTEI is a TEI /rerank server that caps requests at 3 texts (413
// as TEI words it), answers every third request 429 with Retry-After 0
// and every fifth one after 300 ms. Its score is a fixed function of the
// pair.
func faultyTEI(t *testing.T) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/rerank" {
			http.Error(w, `{"error":"bad request"}`, 400)
			return
		}
		switch {
		case n%3 == 0:
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":"model is overloaded","error_type":"Overloaded"}`, http.StatusTooManyRequests)
			return
		case n%5 == 0:
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		case len(req.Texts) > 3:
			http.Error(w, fmt.Sprintf(`{"error":"batch size %d > maximum allowed batch size 3","error_type":"Validation"}`, len(req.Texts)), http.StatusRequestEntityTooLarge)
			return
		}
		out := make([]map[string]any, len(req.Texts))
		for i, d := range req.Texts {
			out[i] = map[string]any{"index": i, "score": pairScore(req.Query, d)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// pairScore is faultyTEI's model: a probability from the pair's bytes.
func pairScore(q, d string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(q + "\x00" + d))
	return float64(h.Sum64()%999_983+1) / 1_000_000
}

// TestServedFaults: `eval locomo` through a TEI server that caps
// documents, answers 429 and answers too slowly loses no question: every
// judged question has its reranked candidates, each scored as the server
// scores it, and the retries are counted.
func TestServedFaults(t *testing.T) {
	url, requests := faultyTEI(t)
	runFile := filepath.Join(t.TempDir(), "run.txt")
	var out, errb bytes.Buffer
	code := run([]string{"locomo", "--data", fixtures, "--json", "--pipeline", "bm25+rerank", "--rerank-url", url, "--rerank-api", "tei",
		"--request-timeout", "100ms", "--no-cache", "--run", runFile}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res locomoResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	// The same pipeline's candidates without a rerank stage, to know what
	// each question should hold.
	var plain bytes.Buffer
	bm25Run := filepath.Join(t.TempDir(), "bm25.txt")
	if code := run([]string{"locomo", "--data", fixtures, "--depth", "50", "--run", bm25Run}, &plain, &errb); code != exitOK {
		t.Fatal(errb.String())
	}
	raw, _ := os.ReadFile(runFile)
	rawBM25, _ := os.ReadFile(bm25Run)
	got, want := readRunBytes(t, raw), readRunBytes(t, rawBM25)
	if len(got) != len(want) || len(got) != res.Summary.Queries {
		t.Fatalf("%d questions reranked, %d retrieved, %d judged", len(got), len(want), res.Summary.Queries)
	}
	ds, err := locomo.Load(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	question, text := map[string]string{}, map[string]string{}
	for i := range ds.Conversations {
		c := &ds.Conversations[i]
		for _, q := range c.Questions {
			question[q.ID] = q.Text
		}
		for _, m := range c.Memories(locomo.UnitTurn) {
			text[m.DocID] = m.Text
		}
	}
	for q, list := range want {
		if len(got[q]) != len(list) {
			t.Errorf("%s: %d reranked of %d candidates", q, len(got[q]), len(list))
		}
		for _, r := range got[q] {
			if w := pairScore(question[q], text[r.DocID]); math.Abs(r.Score-w) > 1e-15 {
				t.Errorf("%s %s: score %v, the server's is %v", q, r.DocID, r.Score, w)
			}
		}
	}
	if s := res.Served; s == nil || s.Retried == 0 || s.RerankRequests == 0 {
		t.Errorf("served counts %+v after %d requests", res.Served, requests.Load())
	}
}
