package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scoring"
)

// fakeBackend scores by word overlap so tests know the expected order:
// score = (1 + matched query words) / (2 + query words).
type fakeBackend struct {
	err    error         // returned by Score when set
	nan    bool          // return a NaN score
	block  bool          // wait for the context to end
	calls  atomic.Int64  // Score calls
	delay  time.Duration // added latency
	closed atomic.Bool
}

func (f *fakeBackend) Name() string    { return "fake" }
func (f *fakeBackend) ModelID() string { return "fake-model" }
func (f *fakeBackend) MaxTokens() int  { return 1024 }
func (f *fakeBackend) Close(context.Context) error {
	f.closed.Store(true)
	return nil
}

func (f *fakeBackend) Score(ctx context.Context, r rerank.Request) (scoring.Scored, error) {
	f.calls.Add(1)
	if f.block {
		<-ctx.Done()
		return scoring.Scored{}, ctx.Err()
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.err != nil {
		return scoring.Scored{}, f.err
	}
	if strings.TrimSpace(r.Query) == "" {
		return scoring.Scored{}, rerank.ErrEmptyQuery
	}
	qw := strings.Fields(strings.ToLower(r.Query))
	out := make([]rerank.Score, len(r.Docs))
	for i, d := range r.Docs {
		m := 0
		for _, w := range qw {
			if strings.Contains(strings.ToLower(d), w) {
				m++
			}
		}
		p := float64(1+m) / float64(2+len(qw))
		out[i] = rerank.Score{Score: p, Logit: math.Log(p / (1 - p)), Tokens: len(strings.Fields(d)) + 10}
		if f.nan {
			out[i].Score = math.NaN()
		}
	}
	return scoring.Scored{Scores: out, Timing: scoring.Timing{Tokenize: time.Millisecond, Queue: 2 * time.Millisecond, Inference: 3 * time.Millisecond}}, nil
}

// start runs a server for b on a loopback port until the test ends.
func start(t *testing.T, cfg Config, b scoring.Backend, opts ...func(*Server)) string {
	t.Helper()
	return startWithMetrics(t, cfg, b, nil, opts...)
}

// startWithMetrics is start with the server's metrics given (nil: new).
func startWithMetrics(t *testing.T, cfg Config, b scoring.Backend, m *Metrics, opts ...func(*Server)) string {
	t.Helper()
	srv, err := New(cfg, b, Limits{QueueSize: 64, BatchTokens: 4096, MaxBatch: 8}, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

type response struct {
	code   int
	body   []byte
	header http.Header
}

func do(t *testing.T, method, url, contentType, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, b, resp.Header}
}

func postJSON(t *testing.T, url, body string, headers ...string) response {
	t.Helper()
	return do(t, http.MethodPost, url, "application/json", body, headers...)
}

func decodeInto(t *testing.T, r response, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// cancelBackend blocks until its context ends and reports why.
type cancelBackend struct {
	fakeBackend
	ended chan error
}

func (b *cancelBackend) Score(ctx context.Context, _ rerank.Request) (scoring.Scored, error) {
	<-ctx.Done()
	b.ended <- ctx.Err()
	return scoring.Scored{}, ctx.Err()
}
