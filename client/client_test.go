package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
)

// scripted answers each request with the next of its answers (the last
// one repeats) and records what it was sent.
type scripted struct {
	mu      sync.Mutex
	answers []answer
	got     []*http.Request
	bodies  []string
}

type answer struct {
	status     int
	retryAfter string
	body       string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	s.got = append(s.got, r)
	s.bodies = append(s.bodies, string(body))
	a := s.answers[min(len(s.got)-1, len(s.answers)-1)]
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

func errBody(kind, msg string) string {
	b, _ := json.Marshal(api.NewError(msg, kind))
	return string(b)
}

// newScripted returns a client of a scripted server whose waits are
// recorded instead of slept.
func newScripted(t *testing.T, cfg Config, answers ...answer) (*Client, *scripted, *[]time.Duration) {
	t.Helper()
	s := &scripted{answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, s, &waits
}

const okRerank = `{"id":"x","results":[{"index":1,"relevance_score":0.9}]}`

func TestRetry(t *testing.T) {
	overloaded := answer{http.StatusTooManyRequests, "", errBody("overloaded", "queue full")}
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name      string
		cfg       Config
		answers   []answer
		wantWaits []time.Duration // exact, or within 2 s for an HTTP date
		wantErr   int             // status of the returned *Error; 0: success
		attempts  int
	}{
		{"retry-after seconds", Config{}, []answer{{429, "2", errBody("overloaded", "q")}, {503, "1", errBody("not_ready", "s")}, {200, "", okRerank}},
			[]time.Duration{2 * time.Second, time.Second}, 0, 3},
		{"doubling without retry-after", Config{RetryBase: 100 * time.Millisecond}, []answer{overloaded, overloaded, overloaded, {200, "", okRerank}},
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, 0, 4},
		{"http date", Config{RetryBudget: time.Hour}, []answer{{503, date, ""}, {200, "", okRerank}},
			[]time.Duration{90 * time.Second}, 0, 2},
		{"max retries", Config{MaxRetries: 2, RetryBase: time.Millisecond}, []answer{overloaded},
			[]time.Duration{time.Millisecond, 2 * time.Millisecond}, 429, 3},
		{"no retries", Config{MaxRetries: -1}, []answer{overloaded}, nil, 429, 1},
		{"budget", Config{RetryBudget: 30 * time.Second}, []answer{{429, "20", ""}},
			[]time.Duration{20 * time.Second}, 429, 2},
		{"retry-after past the budget", Config{RetryBudget: 5 * time.Second}, []answer{{429, "3600", ""}}, nil, 429, 1},
		{"not retried: validation", Config{}, []answer{{422, "", errBody("validation", "top_n must be >= 1")}}, nil, 422, 1},
		{"not retried: 500", Config{}, []answer{{500, "", "oops"}}, nil, 500, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s, waits := newScripted(t, tc.cfg, tc.answers...)
			res, err := c.Rerank(context.Background(), api.RerankRequest{Query: "q", Documents: []api.Document{{Text: "a"}, {Text: "b"}}})
			if len(s.got) != tc.attempts {
				t.Errorf("%d attempts, want %d", len(s.got), tc.attempts)
			}
			if len(*waits) != len(tc.wantWaits) {
				t.Fatalf("waits %v, want %v", *waits, tc.wantWaits)
			}
			for i, w := range tc.wantWaits {
				if d := (*waits)[i] - w; d < -2*time.Second || d > 0 || (tc.name != "http date" && d != 0) {
					t.Errorf("wait %d: %v, want %v", i, (*waits)[i], w)
				}
			}
			if tc.wantErr == 0 {
				if err != nil || len(res.Results) != 1 || res.Results[0].Index != 1 {
					t.Fatalf("got %+v, %v", res, err)
				}
				if !slices.Equal(uniq(s.bodies), s.bodies[:1]) {
					t.Errorf("retries sent different bodies: %q", s.bodies)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.wantErr || e.Attempts != tc.attempts {
				t.Fatalf("error %v (%#v), want status %d after %d attempts", err, e, tc.wantErr, tc.attempts)
			}
		})
	}
}

func uniq(s []string) []string { return slices.Compact(slices.Clone(s)) }

// TestRetryHonoursContext: a context cancelled during the wait before a
// retry ends the wait, with the context's error. The context is cancelled
// once the wait has begun (not by a timer), so a slow first attempt on a
// loaded host cannot end it before the wait.
func TestRetryHonoursContext(t *testing.T) {
	c, s, _ := newScripted(t, Config{}, answer{429, "30", errBody("overloaded", "queue full")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.sleep = func(ctx context.Context, d time.Duration) error {
		if d < 30*time.Second {
			t.Errorf("waits %v, want the Retry-After's 30s", d)
		}
		cancel()
		return sleepCtx(ctx, d)
	}
	start := time.Now()
	_, err := c.Rerank(ctx, api.RerankRequest{Query: "q", Documents: []api.Document{{Text: "a"}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the context's cancellation", err)
	}
	if time.Since(start) > 10*time.Second || len(s.got) != 1 {
		t.Fatalf("took %v over %d attempts: the wait ignored the context", time.Since(start), len(s.got))
	}
}

// TestErrorShapes: the server's error body becomes Type and Message; a
// body that is not rerankd's (a proxy's page) is kept as text.
func TestErrorShapes(t *testing.T) {
	cases := []struct {
		body, wantType, wantMsg string
	}{
		{errBody("validation", "threshold must be in [0, 1]"), "validation", "threshold must be in [0, 1]"},
		{`{"error":"old server","error_type":"invalid_request"}`, "invalid_request", "old server"},                                                                                // before "message" existed
		{`{"error":{"message":"input must not be empty","type":"invalid_request_error","param":"input","code":"invalid_request"}}`, "invalid_request", "input must not be empty"}, // OpenAI's shape
		{"<html>bad gateway</html>", "", "<html>bad gateway</html>"},
		{"", "", ""},
	}
	for _, tc := range cases {
		c, _, _ := newScripted(t, Config{}, answer{400, "", tc.body})
		_, err := c.Info(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Type != tc.wantType || e.Message != tc.wantMsg || e.Status != 400 || e.Temporary() {
			t.Errorf("body %q: %#v", tc.body, e)
		}
		if tc.wantType != "" && !strings.Contains(err.Error(), tc.wantType) {
			t.Errorf("error text %q lacks the type", err)
		}
	}
}

// TestRequests: method, path (escaped), headers and query of each call.
func TestRequests(t *testing.T) {
	c, s, _ := newScripted(t, Config{APIKey: "secret-key-1"}, answer{200, "", `{}`})
	ctx := context.Background()
	calls := []struct {
		run          func() error
		method, path string
	}{
		{func() error { _, err := c.ListMemories(ctx, "a:b", ListOptions{Limit: 5, After: "m 1"}); return err }, "GET", "/v1/memories/a:b?after=m+1&limit=5"},
		{func() error { _, err := c.GetMemory(ctx, "ns", "id/with slash"); return err }, "GET", "/v1/memories/ns/id%2Fwith%20slash"},
		{func() error { _, err := c.DeleteMemory(ctx, "ns", "m1"); return err }, "DELETE", "/v1/memories/ns/m1"},
		{func() error {
			text := "new"
			_, err := c.UpdateMemory(ctx, "ns", "m1", api.UpdateMemoryRequest{Text: &text})
			return err
		}, "PATCH", "/v1/memories/ns/m1"},
		{func() error { _, err := c.Forget(ctx, "a:b"); return err }, "DELETE", "/v1/memories/a:b"},
		{func() error { _, err := c.Namespaces(ctx); return err }, "GET", "/v1/namespaces"},
		{func() error {
			f := &api.Filter{Must: []api.Condition{{Key: "kind", Match: &api.MatchCondition{Value: "fact"}}}}
			_, err := c.ListMemories(ctx, "ns", ListOptions{Filter: f})
			return err
		}, "GET", "/v1/memories/ns?filter=%7B%22must%22%3A%5B%7B%22key%22%3A%22kind%22%2C%22match%22%3A%7B%22value%22%3A%22fact%22%7D%7D%5D%7D"},
		{func() error { _, err := c.Search(ctx, api.SearchRequest{Namespace: "ns", Query: "q"}); return err }, "POST", "/v1/search"},
		{func() error {
			_, err := c.AddMemories(ctx, api.AddMemoriesRequest{MemoryIn: api.MemoryIn{Text: "t"}})
			return err
		}, "POST", "/v1/memories"},
		{func() error { return c.Health(ctx) }, "GET", "/health"},
	}
	for i, call := range calls {
		if err := call.run(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		r := s.got[i]
		if r.Method != call.method || r.URL.RequestURI() != call.path {
			t.Errorf("call %d: %s %s, want %s %s", i, r.Method, r.URL.RequestURI(), call.method, call.path)
		}
		if r.Header.Get("Authorization") != "Bearer secret-key-1" || r.Header.Get("User-Agent") != "rerankd-go-client" {
			t.Errorf("call %d: headers %v", i, r.Header)
		}
		if (call.method == "POST" || call.method == "PATCH") != (r.Header.Get("Content-Type") == "application/json") {
			t.Errorf("call %d: content type %q", i, r.Header.Get("Content-Type"))
		}
	}
}

// TestEmbed: EmbedTexts sends /v1/embeddings and places the vectors by
// index, decoding base64 and floats alike.
func TestEmbed(t *testing.T) {
	// 1.5 and -2 as little-endian float32, base64: AADAPwAAAMA=.
	body := `{"object":"list","model":"m","usage":{"prompt_tokens":3,"total_tokens":3},"data":[` +
		`{"object":"embedding","index":1,"embedding":"AADAPwAAAMA="},{"object":"embedding","index":0,"embedding":[0.25,0.5]}]}`
	c, s, _ := newScripted(t, Config{}, answer{200, "", body})
	vecs, err := c.EmbedTexts(context.Background(), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || vecs[0][0] != 0.25 || vecs[0][1] != 0.5 || vecs[1][0] != 1.5 || vecs[1][1] != -2 {
		t.Errorf("vectors %v", vecs)
	}
	if r := s.got[0]; r.Method != "POST" || r.URL.Path != "/v1/embeddings" || s.bodies[0] != `{"input":["a","b"]}` {
		t.Errorf("request %s %s %s", r.Method, r.URL.Path, s.bodies[0])
	}
	c, _, _ = newScripted(t, Config{}, answer{200, "", `{"object":"list","data":[{"index":5,"embedding":[1]}]}`})
	if _, err := c.EmbedTexts(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "index 5") {
		t.Errorf("an index outside the texts: %v", err)
	}
}

// TestReadyNotRetried: "not ready" is Ready's answer, not a reason to wait.
func TestReadyNotRetried(t *testing.T) {
	c, s, waits := newScripted(t, Config{}, answer{503, "1", errBody("not_ready", "not ready")})
	var e *Error
	if err := c.Ready(context.Background()); !errors.As(err, &e) || e.Status != 503 || !e.Temporary() {
		t.Fatalf("Ready: %v", err)
	}
	if len(s.got) != 1 || len(*waits) != 0 {
		t.Errorf("%d attempts, waits %v", len(s.got), *waits)
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := New(Config{BaseURL: "localhost:8080", MaxRetries: -5, RetryBudget: -time.Second, APIKey: "a\nb"})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{"base URL", "max retries", "retry budget", "line break"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if _, err := New(Config{BaseURL: "https://rerankd.internal:8443/prefix/"}); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"": 0, "0": 0, "5": 5 * time.Second, " 7 ": 7 * time.Second, "-1": 0, "soon": 0, "999999999": 0,
		now.Add(time.Minute).Format(http.TimeFormat):  time.Minute,
		now.Add(-time.Minute).Format(http.TimeFormat): 0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "-3", "Wed, 21 Oct 2015 07:28:00 GMT", "1e9", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, s string) {
		if d := parseRetryAfter(s, now); d < 0 || d > 24*time.Hour+time.Second && !strings.Contains(s, ",") {
			t.Fatalf("%q: %v", s, d)
		}
	})
}
