package serve

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/mcptest"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// startMCP runs a server with the memory API and /mcp over a fresh store.
func startMCP(tb testing.TB, cfg Config) (string, *Server) {
	tb.Helper()
	st, err := bolt.Open(filepath.Join(tb.TempDir(), "m.db"), bolt.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	b := &fakeBackend{}
	e, err := retrieval.New(st, nil, withScorer(retrieval.DefaultConfig(), cfg, b))
	if err != nil {
		tb.Fatal(err)
	}
	e.Start()
	if err := e.Wait(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close(); _ = st.Close() })
	srv, err := New(cfg, b, Limits{QueueSize: 64, BatchTokens: 4096, MaxBatch: 8}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	srv.WithMemory(e)
	ms, err := srv.NewMCP(MCPOptions{Namespace: "default", Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	srv.WithMCP(ms)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String(), srv
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP opens a client session on /mcp with key ("" for none).
func connectHTTP(t *testing.T, url, key string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}
	if key != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{key}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: protocol error %v", tool, args, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPTools(t *testing.T) {
	url, _ := startMCP(t, DefaultConfig())
	cs, err := connectHTTP(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s: no description or schema", tl.Name)
		}
	}
	if got := strings.Join(names, ","); got != mcptest.Tools {
		t.Fatalf("tools %s", got)
	}
	cases := []struct {
		name, tool, args string
		want             string // in the text content
		isError          bool
	}{
		{"add", "memory_add", `{"id":"m1","text":"Alice moved to Paris in May"}`, `"id":"m1"`, false},
		{"add elsewhere", "memory_add", `{"namespace":"bob","id":"b1","text":"Bob likes tea"}`, `"namespace":"bob"`, false},
		{"search default namespace", "memory_search", `{"query":"where does Alice live"}`, "Paris", false},
		{"search other namespace", "memory_search", `{"query":"Paris","namespace":"bob"}`, `"returned":0`, false},
		{"list", "memory_list", `{"limit":10}`, `"id":"m1"`, false},
		{"rerank", "rerank", `{"query":"tea","documents":["coffee","tea"],"top_n":1}`, `"relevance_score"`, false},
		{"delete", "memory_delete", `{"id":"m1"}`, `"deleted":true`, false},
		{"delete again", "memory_delete", `{"id":"m1"}`, "not found", true},
		{"empty text", "memory_add", `{"text":""}`, "text", true},
		{"text not a string", "memory_add", `{"text":5}`, `field "text": got JSON number, want a JSON string`, true},
		{"bad time", "memory_add", `{"text":"x","time":"yesterday"}`, "RFC 3339", true},
		{"empty query", "memory_search", `{"query":" "}`, "query must not be empty", true},
		{"top_k out of range", "memory_search", `{"query":"q","top_k":0}`, "top_k 0: want 1..1000", true},
		{"bad half life", "memory_search", `{"query":"q","recency":{"half_life":"week"}}`, `recency.half_life "week"`, true},
		{"bad namespace", "memory_list", `{"namespace":"a/b"}`, "namespace", true},
		{"limit out of range", "memory_list", `{"limit":0}`, "limit 0: want an integer in 1..1000", true},
		{"no documents", "rerank", `{"query":"q","documents":[]}`, "documents (or texts) must not be empty", true},
		{"no arguments", "rerank", `{}`, "query must not be empty", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, cs, tc.tool, tc.args)
			if r.IsError != tc.isError || !strings.Contains(text(r), tc.want) {
				t.Fatalf("isError %v %q, want isError %v containing %q", r.IsError, text(r), tc.isError, tc.want)
			}
			if r.StructuredContent == nil {
				t.Fatal("no structuredContent")
			}
		})
	}
}

// A bad argument gets the message the HTTP API gives for it.
func TestMCPSameMessagesAsHTTP(t *testing.T) {
	url, _ := startMCP(t, DefaultConfig())
	cs, err := connectHTTP(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ tool, args, method, path, body string }{
		{"memory_add", `{"namespace":"a","text":""}`, "POST", "/v1/memories", `{"namespace":"a","text":""}`},
		{"memory_add", `{"namespace":"a","text":"x","metadata":{"k":[1]}}`, "POST", "/v1/memories", `{"namespace":"a","text":"x","metadata":{"k":[1]}}`},
		{"memory_search", `{"query":"q","treshold":0.5}`, "POST", "/v1/search", `{"namespace":"default","query":"q","treshold":0.5}`},
		{"memory_search", `{"namespace":"a","query":"q","top_k":5000,"mmr":{"lambda":2}}`, "POST", "/v1/search", `{"namespace":"a","query":"q","top_k":5000,"mmr":{"lambda":2}}`},
		{"memory_search", `{"namespace":"a b","query":"q"}`, "POST", "/v1/search", `{"namespace":"a b","query":"q"}`},
		{"memory_delete", `{"namespace":"a","id":"nope"}`, "DELETE", "/v1/memories/a/nope", ``},
		{"rerank", `{"query":"q","documents":["a"],"top_n":0}`, "POST", "/rerank", `{"query":"q","documents":["a"],"top_n":0}`},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			r := call(t, cs, tc.tool, tc.args)
			ct := ""
			if tc.body != "" {
				ct = "application/json"
			}
			h := do(t, tc.method, url+tc.path, ct, tc.body)
			var he api.Error
			decodeInto(t, h, &he)
			if !r.IsError || text(r) != he.Message || he.Message == "" {
				t.Fatalf("MCP %q (isError %v), HTTP %d %q", text(r), r.IsError, h.code, he.Message)
			}
		})
	}
}

func TestMCPAuthAndScopes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"alice-key-123", "admin-key-789"}
	cfg.KeyScopes = map[string][]string{"alice-key-123": {"alice"}}
	url, _ := startMCP(t, cfg)

	if r := postJSON(t, url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream"); r.code != http.StatusUnauthorized {
		t.Fatalf("no key: %d %s", r.code, r.body)
	}
	if _, err := connectHTTP(t, url, "wrong-key"); err == nil {
		t.Fatal("a wrong key connected")
	}
	cs, err := connectHTTP(t, url, "alice-key-123")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool, args string
		allowed          bool
	}{
		{"own namespace", "memory_add", `{"namespace":"alice","text":"mine"}`, true},
		{"default namespace outside the scope", "memory_add", `{"text":"x"}`, false},
		{"search another", "memory_search", `{"namespace":"bob","query":"q"}`, false},
		{"list another", "memory_list", `{"namespace":"bob"}`, false},
		{"delete another", "memory_delete", `{"namespace":"bob","id":"x"}`, false},
		{"rerank has no namespace", "rerank", `{"query":"q","documents":["a"]}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, cs, tc.tool, tc.args)
			refused := r.IsError && strings.Contains(text(r), "this API key may not use namespace")
			if refused == tc.allowed || (tc.allowed && r.IsError) {
				t.Fatalf("isError %v %q, allowed %v", r.IsError, text(r), tc.allowed)
			}
		})
	}
}

// A memory written through one front is found through the other.
func TestMCPAndHTTPShareMemory(t *testing.T) {
	url, _ := startMCP(t, DefaultConfig())
	cs, err := connectHTTP(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, cs, "memory_add", `{"namespace":"n","id":"via-mcp","text":"the deploy key rotates on Fridays"}`); r.IsError {
		t.Fatal(text(r))
	}
	if r := postJSON(t, url+"/v1/memories", `{"namespace":"n","id":"via-http","text":"the staging database lives in Frankfurt"}`); r.code != http.StatusCreated {
		t.Fatalf("%d %s", r.code, r.body)
	}
	var sr api.SearchResponse
	decodeInto(t, postJSON(t, url+"/v1/search", `{"namespace":"n","query":"when does the deploy key rotate"}`), &sr)
	if len(sr.Results) == 0 || sr.Results[0].ID != "via-mcp" {
		t.Fatalf("HTTP search: %+v", sr.Results)
	}
	r := call(t, cs, "memory_search", `{"namespace":"n","query":"where is the staging database"}`)
	var ms api.SearchResponse
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &ms); err != nil || len(ms.Results) == 0 || ms.Results[0].ID != "via-http" {
		t.Fatalf("MCP search: %s (%v)", b, err)
	}
}
