package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
)

// mcpCallAdd is a raw tools/call of memory_add, as a page would send it.
const mcpCallAdd = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_add","arguments":{"namespace":"victim","text":"planted by a page"}}}`

// TestHostOriginPolicy: on a loopback server, a page using DNS rebinding
// (a foreign Host) or a cross-site request (a foreign Origin, or
// Sec-Fetch-Site cross-site) reaches no route: REST, memory and /mcp alike
// answer 403 and nothing is stored. Same-origin pages, non-browser clients
// and allow-listed names still work.
func TestHostOriginPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed func(*Config)
		cases   []badCase
	}{
		{name: "default", cases: originCatalogue()},
		{name: "allow-lists", allowed: func(c *Config) {
			c.AllowedHosts = []string{"mem.example.com", "other.example:8443"}
			c.AllowedOrigins = []string{"https://app.example.com"}
		}, cases: []badCase{
			{name: "allowed host (any port)", method: "GET", path: "/info", hdr: []string{"Host", "mem.example.com:9"}, code: 200},
			{name: "allowed host:port", method: "GET", path: "/info", hdr: []string{"Host", "other.example:8443"}, code: 200},
			{name: "allowed host, other port", method: "GET", path: "/info", hdr: []string{"Host", "other.example:1"}, code: 403, kind: KindForbidden},
			{name: "allowed origin stores", method: "POST", path: "/v1/memories", ctype: "application/json",
				body: `{"namespace":"ok","text":"from the app"}`, hdr: []string{"Origin", "https://app.example.com"}, code: 201},
			{name: "other origin still refused", method: "POST", path: "/v1/memories", ctype: "application/json",
				body: `{"namespace":"victim","text":"x"}`, hdr: []string{"Origin", "https://attacker.example"}, code: 403, kind: KindForbidden},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.allowed != nil {
				tc.allowed(&cfg)
			}
			base, _ := startMCP(t, cfg)
			client := &http.Client{}
			for _, c := range tc.cases {
				t.Run(c.name, func(t *testing.T) {
					r := send(t, client, c, base+c.path)
					if c.path == "/mcp" && c.kind == "" {
						if r.code != 200 || !strings.Contains(string(r.body), `"result"`) {
							t.Errorf("mcp: %d %s", r.code, r.body)
						}
						return
					}
					checkBad(t, c, r)
				})
			}
			// Nothing a refused request sent was stored.
			r := do(t, http.MethodGet, base+"/v1/memories/victim", "", "")
			var list api.ListMemoriesResponse
			decodeInto(t, r, &list)
			if r.code != 200 || len(list.Memories) != 0 {
				t.Fatalf("namespace victim after refused requests: %d %s", r.code, r.body)
			}
		})
	}
}

// originCatalogue is the default policy's table (docs/bad-input.md).
func originCatalogue() []badCase {
	j := "application/json"
	mcpHdr := func(h ...string) []string {
		return append([]string{"Accept", "application/json, text/event-stream"}, h...)
	}
	add := `{"namespace":"victim","text":"planted by a page"}`
	return []badCase{
		{name: "foreign Host on /mcp (DNS rebinding)", method: "POST", path: "/mcp", ctype: j, body: mcpCallAdd,
			hdr: mcpHdr("Host", "attacker.example:8080"), code: 403, kind: KindForbidden},
		{name: "foreign Origin on /mcp", method: "POST", path: "/mcp", ctype: j, body: mcpCallAdd,
			hdr: mcpHdr("Origin", "https://attacker.example"), code: 403, kind: KindForbidden},
		{name: "Origin null on /mcp", method: "POST", path: "/mcp", ctype: j, body: mcpCallAdd,
			hdr: mcpHdr("Origin", "null"), code: 403, kind: KindForbidden},
		{name: "foreign Host on search", method: "POST", path: "/v1/search", ctype: j, body: `{"namespace":"victim","query":"x"}`,
			hdr: []string{"Host", "attacker.example"}, code: 403, kind: KindForbidden},
		{name: "foreign Host on GET memory list", method: "GET", path: "/v1/memories/victim",
			hdr: []string{"Host", "attacker.example"}, code: 403, kind: KindForbidden},
		{name: "foreign Host on /health", method: "GET", path: "/health",
			hdr: []string{"Host", "attacker.example"}, code: 403, kind: KindForbidden},
		{name: "no Content-Type, foreign Origin (no-cors fetch)", method: "POST", path: "/v1/memories", body: add,
			hdr: []string{"Origin", "https://attacker.example"}, code: 403, kind: KindForbidden},
		{name: "text/plain, foreign Origin", method: "POST", path: "/v1/memories", ctype: "text/plain", body: add,
			hdr: []string{"Origin", "https://attacker.example"}, code: 403, kind: KindForbidden},
		{name: "Sec-Fetch-Site cross-site without Origin", method: "POST", path: "/v1/memories", ctype: j, body: add,
			hdr: []string{"Sec-Fetch-Site", "cross-site"}, code: 403, kind: KindForbidden},
		{name: "foreign Origin on DELETE", method: "DELETE", path: "/v1/memories/victim/m1",
			hdr: []string{"Origin", "http://attacker.example"}, code: 403, kind: KindForbidden},
		{name: "foreign Origin on rerank", method: "POST", path: "/rerank", ctype: j, body: okRerank,
			hdr: []string{"Origin", "http://localhost.attacker.example"}, code: 403, kind: KindForbidden},
		// Accepted: the server's own pages and non-browser clients.
		{name: "localhost Host", method: "GET", path: "/info", hdr: []string{"Host", "localhost:1234"}, code: 200},
		{name: "[::1] Host", method: "GET", path: "/info", hdr: []string{"Host", "[::1]:1234"}, code: 200},
		{name: "same-origin page", method: "POST", path: "/rerank", ctype: j, body: okRerank,
			hdr: []string{"Host", "localhost:1234", "Origin", "http://localhost:1234", "Sec-Fetch-Site", "same-origin"}, code: 200},
		{name: "foreign Origin on GET (reads are guarded by the browser)", method: "GET", path: "/info",
			hdr: []string{"Origin", "https://attacker.example"}, code: 200},
		{name: "MCP without Origin", method: "POST", path: "/mcp", ctype: j, hdr: mcpHdr(),
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_add","arguments":{"namespace":"ok","text":"fine"}}}`},
	}
}

// TestMCPHTTPJSONRPCErrors: /mcp answers protocol failures as JSON-RPC
// error objects (stdio's codes), and the rerank tool refuses a null
// document as /rerank does.
func TestMCPHTTPJSONRPCErrors(t *testing.T) {
	base, _ := startMCP(t, DefaultConfig())
	hdr := []string{"Accept", "application/json, text/event-stream"}
	for _, c := range []struct {
		name, body string
		code       float64
		id         any
		contains   string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"no/such"}`, -32601, float64(4), ""},
		{"not JSON", `{"jsonrpc":`, -32700, nil, ""},
		{"rerank with a null document", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rerank","arguments":{"query":"q","documents":[null,"a"]}}}`,
			0, float64(5), "document 0: not a JSON string but null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := postJSON(t, base+"/mcp", c.body, hdr...)
			var m map[string]any
			decodeInto(t, r, &m)
			if m["id"] != c.id {
				t.Errorf("id %v, want %v: %s", m["id"], c.id, r.body)
			}
			if c.contains != "" {
				if !strings.Contains(string(r.body), c.contains) || !strings.Contains(string(r.body), `"isError":true`) {
					t.Errorf("answer %s: want a tool error naming %q", r.body, c.contains)
				}
				return
			}
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code {
				t.Errorf("answer %d %s: want JSON-RPC error %v", r.code, r.body, c.code)
			}
		})
	}
}
