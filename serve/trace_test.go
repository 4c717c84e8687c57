package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/otlptest"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/tracing"
)

// tracedConfig returns cfg exporting to rcv over OTLP/HTTP, and the flush
// that delivers what is still buffered.
func tracedConfig(t *testing.T, cfg Config, rcv *otlptest.Receiver) (Config, func()) {
	t.Helper()
	tc := tracing.DefaultConfig()
	tc.Enabled, tc.Endpoint = true, rcv.HTTPURL
	p, err := tracing.Start(context.Background(), tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	cfg.Tracer = p
	return cfg, func() {
		if err := p.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// traceparent returns a W3C header for a fixed trace and parent span.
func traceparent(i int) (header, traceID, parentID string) {
	traceID = fmt.Sprintf("%032x", 0xabc000+i)
	parentID = fmt.Sprintf("%016x", 0xdef000+i)
	return "00-" + traceID + "-" + parentID + "-01", traceID, parentID
}

func byID(spans []otlptest.Span) map[string]otlptest.Span {
	m := make(map[string]otlptest.Span, len(spans))
	for _, s := range spans {
		m[s.SpanID] = s
	}
	return m
}

// childrenOf returns the spans named name whose parent is parent.
func childrenOf(spans []otlptest.Span, parent otlptest.Span, name string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range otlptest.Named(spans, name) {
		if s.ParentSpanID == parent.SpanID && s.TraceID == parent.TraceID {
			out = append(out, s)
		}
	}
	return out
}

// TestTracingRerankNeural: concurrent /rerank requests through the real
// scheduler and a tiny ONNX model each arrive at an OTLP receiver as one
// server span under the caller's traceparent, with tokenize, queue and
// inference children; every engine call is one batch span linked to every
// request it served, and each request's inference spans link back to it.
// No query or document text leaves the process.
func TestTracingRerankNeural(t *testing.T) {
	sc := scheduler.DefaultConfig()
	sc.MaxWait = 50 * time.Millisecond // let concurrent requests share calls
	b, _ := neuralBackend(t, sc)
	rcv := otlptest.Start(t)
	cfg, flush := tracedConfig(t, DefaultConfig(), rcv)
	url := start(t, cfg, b) + "/rerank"

	const n = 4
	secret := func(i int) (q, d string) {
		return fmt.Sprintf("zebra-query-%d", i), fmt.Sprintf("okapi-document-%d", i)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tp, _, _ := traceparent(i)
			q, d := secret(i)
			r := postJSON(t, url, fmt.Sprintf(`{"query":%q,"documents":[%q,"another document"]}`, q, d), "traceparent", tp)
			if r.code != 200 {
				t.Errorf("request %d: %d %s", i, r.code, r.body)
			}
		}()
	}
	wg.Wait()
	flush()
	spans := rcv.Spans()
	ids := byID(spans)
	scoreOf := map[string]otlptest.Span{} // score span id → span
	for i := range n {
		_, traceID, parentID := traceparent(i)
		var server []otlptest.Span
		for _, s := range otlptest.Named(spans, "POST /rerank") {
			if s.TraceID == traceID {
				server = append(server, s)
			}
		}
		if len(server) != 1 {
			t.Fatalf("request %d: %d server spans in its trace, want 1", i, len(server))
		}
		srv := server[0]
		if srv.ParentSpanID != parentID || srv.Kind != "SPAN_KIND_SERVER" || srv.Attrs["http.route"] != "/rerank" ||
			srv.Attrs["http.response.status_code"] != "200" || srv.Attrs["http.request.method"] != "POST" {
			t.Errorf("request %d server span %+v", i, srv)
		}
		score := childrenOf(spans, srv, "rerankd.score")
		if len(score) != 1 || score[0].Attrs["rerankd.documents"] != "2" || score[0].Attrs["rerankd.backend"] != "onnx" {
			t.Fatalf("request %d: score spans %+v", i, score)
		}
		scoreOf[score[0].SpanID] = score[0]
		tok := childrenOf(spans, score[0], "rerankd.tokenize")
		if len(tok) != 1 || tok[0].Attrs["rerankd.tokens"] == "" || tok[0].Attrs["rerankd.tokens"] == "0" {
			t.Errorf("request %d: tokenize spans %+v", i, tok)
		}
		if q := childrenOf(spans, score[0], "rerankd.queue"); len(q) != 1 || q[0].End.Before(q[0].Start) {
			t.Errorf("request %d: queue spans %+v", i, q)
		}
		inf := childrenOf(spans, score[0], "rerankd.inference")
		if len(inf) == 0 {
			t.Fatalf("request %d: no inference span", i)
		}
		for _, s := range inf {
			if len(s.Links) != 1 || ids[s.Links[0].SpanID].Name != "rerankd.batch" {
				t.Errorf("request %d: inference span not linked to its batch: %+v", i, s)
			}
		}
	}
	batches := otlptest.Named(spans, "rerankd.batch")
	linked := map[string]bool{}
	for _, bs := range batches {
		if bs.ParentSpanID != "" {
			t.Errorf("batch span has a parent: %+v", bs)
		}
		if fmt.Sprint(len(bs.Links)) != bs.Attrs["rerankd.batch.requests"] || bs.Attrs["rerankd.batch.rows"] == "" {
			t.Errorf("batch span links %d, attrs %v", len(bs.Links), bs.Attrs)
		}
		for _, l := range bs.Links {
			if _, ok := scoreOf[l.SpanID]; !ok {
				t.Errorf("batch links to %s, not a request's score span", l.SpanID)
			}
			linked[l.SpanID] = true
		}
	}
	if len(linked) != n {
		t.Errorf("%d of %d requests linked from a batch span", len(linked), n)
	}
	raw := rcv.Raw()
	for i := range n {
		q, d := secret(i)
		if bytes.Contains(raw, []byte(q)) || bytes.Contains(raw, []byte(d)) {
			t.Errorf("request %d's text is in the exported spans", i)
		}
	}
}

// TestTracingSearchStages: a memory search's span has a child per stage
// that ran, with counts and no memory text.
func TestTracingSearchStages(t *testing.T) {
	rcv := otlptest.Start(t)
	cfg, flush := tracedConfig(t, DefaultConfig(), rcv)
	url := startMemory(t, cfg, &fakeBackend{}, retrieval.DefaultConfig())
	if r := postJSON(t, url+"/v1/memories", `{"namespace":"u","memories":[
		{"id":"a","text":"walrus coffee oat latte","time":"2025-01-01T00:00:00Z"},
		{"id":"b","text":"walrus coffee flat white","time":"2025-03-01T00:00:00Z"}]}`); r.code != 201 {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	tp, traceID, _ := traceparent(99)
	r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"walrus coffee","threshold":0.1,
		"recency":{"weight":0.5,"half_life":"168h","now":"2025-03-01T00:00:00Z"},"mmr":{"lambda":0.7}}`, "traceparent", tp)
	if r.code != 200 {
		t.Fatalf("search: %d %s", r.code, r.body)
	}
	flush()
	spans := rcv.Spans()
	var srv otlptest.Span
	for _, s := range otlptest.Named(spans, "POST /v1/search") {
		if s.TraceID == traceID {
			srv = s
		}
	}
	if srv.SpanID == "" {
		t.Fatal("no server span for the search")
	}
	ret := childrenOf(spans, srv, "rerankd.retrieve")
	if len(ret) != 1 || ret[0].Attrs["rerankd.candidates"] != "2" || ret[0].Attrs["rerankd.level"] != "bm25" {
		t.Fatalf("retrieve spans %+v", ret)
	}
	for _, name := range []string{"rerankd.bm25", "rerankd.fill"} {
		if len(childrenOf(spans, ret[0], name)) != 1 {
			t.Errorf("no %s span under retrieve", name)
		}
	}
	for _, name := range []string{"rerankd.rerank", "rerankd.threshold", "rerankd.recency", "rerankd.mmr"} {
		if len(childrenOf(spans, srv, name)) != 1 {
			t.Errorf("no %s span under the search", name)
		}
	}
	rr := childrenOf(spans, srv, "rerankd.rerank")
	if len(rr) == 1 && len(childrenOf(spans, rr[0], "rerankd.score")) != 1 {
		t.Error("the reranker's score span is not under the rerank stage")
	}
	if bytes.Contains(rcv.Raw(), []byte("walrus")) {
		t.Error("query or memory text is in the exported spans")
	}
}

// TestTracingErrorsAndProbes: a failed model (424) marks the server span
// failed with its error kind, a 4xx records the kind without failing the span, a request
// without traceparent starts a new trace, and probes are not traced.
func TestTracingErrorsAndProbes(t *testing.T) {
	rcv := otlptest.Start(t)
	cfg, flush := tracedConfig(t, DefaultConfig(), rcv)
	url := start(t, cfg, &fakeBackend{err: errors.New("engine exploded")})
	postJSON(t, url+"/rerank", `{"query":"q","documents":["d"]}`)
	postJSON(t, url+"/rerank", `{"query":"","documents":["d"]}`)
	do(t, "GET", url+"/health", "", "")
	do(t, "GET", url+"/ready", "", "")
	flush()
	spans := rcv.Spans()
	server := otlptest.Named(spans, "POST /rerank")
	if len(server) != 2 {
		t.Fatalf("%d rerank server spans, want 2: %+v", len(server), spans)
	}
	var sawFailed, sawInvalid bool
	for _, s := range server {
		if s.ParentSpanID != "" {
			t.Errorf("no traceparent sent, yet the span has a parent: %+v", s)
		}
		switch s.Attrs["http.response.status_code"] {
		case "424":
			sawFailed = s.Attrs["error.type"] == string(KindBackend) && s.Error
		case "400":
			sawInvalid = s.Attrs["error.type"] == string(KindInvalid) && !s.Error
		}
	}
	if !sawFailed || !sawInvalid {
		t.Errorf("error spans: %+v", server)
	}
	for _, s := range spans {
		if s.Name == "GET /health" || s.Name == "GET /ready" {
			t.Errorf("probe traced: %s", s.Name)
		}
	}
}
