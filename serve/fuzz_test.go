package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/scoring"
)

// fuzzContentTypes are the Content-Type values the fuzzer picks from by
// index: JSON variants the server must accept, and others it must refuse.
var fuzzContentTypes = []string{"application/json", "", "application/json; charset=utf-8",
	"application/vnd.api+json", "text/plain", "application/json; charset", "multipart/form-data; boundary=x"}

// fuzzPaths are the rerank routes plus one that must answer 404.
var fuzzPaths = []string{"/rerank", "/v1/rerank", "/v2/rerank", "/info"}

// FuzzRerankRequest sends arbitrary bodies through the whole HTTP stack
// (routing, auth, decoding, validation, scoring, encoding) on the lexical
// backend, which cannot fail, so any 5xx is the server's own bug. It checks:
// every answer is JSON; errors use the one error shape with the status its
// kind maps to; a body the API types accept and validate gets 200 with
// results that are a ranking of the request's documents.
func FuzzRerankRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"what did Caroline do","documents":["Caroline went to a support group","Melanie painted"],"top_n":1}`,
		`{"query":"q","documents":[{"text":"a","id":7},{"text":"q q"}],"return_documents":true,"threshold":0.1}`,
		`{"query":"q","texts":["a","q"],"raw_scores":true,"return_text":true,"truncate":false,"truncation_direction":"Left"}`,
		`{"query":"q","texts":[],"documents":["a"]}`,
		`{"query":"  ","documents":["a"]}`,
		`{"query":"q","documents":["a"],"top_n":0,"threshold":2,"max_tokens_per_doc":-1}`,
		`{"query":"q","documents":[5]}`,
		`{"query":"q","documents":"a"}`,
		`{"query":"q","documents":["a"],"top_n":1e400}`,
		`{"query":"q\u0000","documents":["\ud800","\xff"]}`,
		`{"query":"q","documents":[{"id":1}]}`,
		`{"query":"q","documents":["a"]`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		`{"query":"a","query":"b","documents":["a"],"unknown":{"x":[1,2,3]}}`,
		``,
		`null`,
	} {
		for i := range 3 {
			f.Add([]byte(s), uint8(i), uint8(i%2))
		}
	}
	cfg := DefaultConfig()
	cfg.MaxDocuments = 64 // so the fuzzer can reach the limit
	srv, err := New(cfg, scoring.NewLexical(lexical.Default()), Limits{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	handler := harnessHandler(srv)
	f.Fuzz(func(t *testing.T, body []byte, ctIdx, pathIdx uint8) {
		ct := fuzzContentTypes[int(ctIdx)%len(fuzzContentTypes)]
		path := fuzzPaths[int(pathIdx)%len(fuzzPaths)]
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI(path)
		if ct != "" {
			req.Header.SetContentType(ct)
		}
		req.SetBody(body)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, nil)
		handler(&ctx)
		code, out := ctx.Response.StatusCode(), ctx.Response.Body()

		if code >= 500 {
			t.Fatalf("%s %q: status %d: %s", path, body, code, out)
		}
		if !json.Valid(out) {
			t.Fatalf("%s %q: status %d, body is not JSON: %q", path, body, code, out)
		}
		if code != 200 {
			var e api.Error
			if err := json.Unmarshal(out, &e); err != nil || e.Error == "" || e.Message != e.Error || e.ErrorType == "" {
				t.Fatalf("%s %q: status %d, not the error shape: %s", path, body, code, out)
			}
			if want := statusOf[Kind(e.ErrorType)]; want != code && e.ErrorType != string(KindInvalid) && e.ErrorType != string(KindTooLarge) {
				// fiber's own errors (405 on a wrong method, 400/413 from the
				// framework) keep their code; ours must match the table.
				t.Fatalf("%s %q: status %d for kind %s, want %d", path, body, code, e.ErrorType, want)
			}
		}
		if path == "/info" {
			return
		}

		// What the API types and validation say about this body.
		var r api.RerankRequest
		accepted := (ct == "" || ct == "application/json" || ct == "application/json; charset=utf-8" || ct == "application/vnd.api+json") &&
			json.Unmarshal(body, &r) == nil && srv.validate(&r) == nil
		if accepted != (code == 200) {
			t.Fatalf("%s %q (%s): status %d, but decode+validate accepted=%v: %s", path, body, ct, code, accepted, out)
		}
		if !accepted {
			return
		}
		n := len(r.Documents)
		if r.TEIStyle() {
			n = len(r.Texts)
		}
		var idx []int
		var scores []float64
		if r.TEIStyle() {
			var res []api.TEIResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("TEI answer: %v: %s", err, out)
			}
			for _, x := range res {
				idx, scores = append(idx, x.Index), append(scores, x.Score)
				if r.ReturnText && (x.Text == nil || *x.Text != r.Texts[x.Index]) {
					t.Fatalf("TEI text of %d not echoed: %s", x.Index, out)
				}
			}
		} else {
			var res api.RerankResponse
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("answer: %v: %s", err, out)
			}
			for _, x := range res.Results {
				idx, scores = append(idx, x.Index), append(scores, x.RelevanceScore)
				if r.ReturnDocuments && (x.Document == nil || x.Document.Text != r.Documents[x.Index].Text) {
					t.Fatalf("document %d not echoed: %s", x.Index, out)
				}
			}
		}
		if r.TopN != nil && len(idx) > *r.TopN || r.Threshold == nil && len(idx) != min(n, topN(r.TopN, n)) {
			t.Fatalf("%d results for %d documents, top_n %v threshold %v", len(idx), n, r.TopN, r.Threshold)
		}
		seen := map[int]bool{}
		for i, x := range idx {
			if x < 0 || x >= n || seen[x] {
				t.Fatalf("result index %d: out of range or repeated (%d documents): %s", x, n, out)
			}
			seen[x] = true
			if i > 0 && scores[i] > scores[i-1] {
				t.Fatalf("results not sorted by score: %v", scores)
			}
		}
	})
}

// harnessHandler is what Serve runs (methodGuard around fiber), callable
// without a socket. fiber builds its route tree on Listener or Handler, so
// Handler is called once for that; its result alone would skip methodGuard.
func harnessHandler(s *Server) fasthttp.RequestHandler {
	s.app.Handler()
	s.ready.Store(true)
	return s.app.Server().Handler
}

func topN(p *int, n int) int {
	if p == nil {
		return n
	}
	return *p
}

// TestFuzzRerankRequestShapes pins what the fuzz target assumes about the
// harness: a bare RequestCtx reaches the handlers and answers like a real
// connection does.
func TestFuzzRerankRequestShapes(t *testing.T) {
	srv, err := New(DefaultConfig(), scoring.NewLexical(lexical.Default()), Limits{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"query":"cat","documents":["a cat","a dog"]}`, 200},
		{`{"query":"cat"`, 400},
		{`{"query":"cat","documents":[]}`, 422},
	} {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI("/rerank")
		req.Header.SetContentType("application/json")
		req.SetBodyString(c.body)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, nil)
		harnessHandler(srv)(&ctx)
		if got := ctx.Response.StatusCode(); got != c.code || !bytes.HasPrefix(ctx.Response.Body(), []byte("{")) {
			t.Errorf("%s: %d %s, want %d", c.body, got, ctx.Response.Body(), c.code)
		}
	}
}
