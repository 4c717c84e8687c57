package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSearch_Front: one search of a 1000-memory namespace on the
// embedded default (bbolt, lexical backend), through POST /v1/search and
// through MCP's memory_search on /mcp, same server, same run, both over
// loopback HTTP. The difference is the front's own cost: JSON-RPC framing
// and the SDK, since both call Server.search.
func BenchmarkSearch_Front(b *testing.B) {
	url, _ := startMCP(b, DefaultConfig())
	var sb strings.Builder
	sb.WriteString(`{"namespace":"bench","memories":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"m%d","text":"note %d about the release train, the staging database and topic %d"}`, i, i, i%37)
	}
	sb.WriteString(`]}`)
	seed, err := http.Post(url+"/v1/memories", "application/json", strings.NewReader(sb.String()))
	if err != nil || seed.StatusCode != http.StatusCreated {
		b.Fatalf("seed: %v %v", seed, err)
	}
	_ = seed.Body.Close()
	const query = `{"namespace":"bench","query":"when does the release train leave for topic 12","top_k":10}`
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := http.Post(url+"/v1/search", "application/json", strings.NewReader(query))
			if err != nil {
				b.Fatal(err)
			}
			var out struct{ Results []json.RawMessage }
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Results) != 10 {
				b.Fatalf("%d %v %d results", resp.StatusCode, err, len(out.Results))
			}
			_ = resp.Body.Close()
		}
	})
	b.Run("mcp", func(b *testing.B) {
		tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
		params := &mcp.CallToolParams{Name: "memory_search", Arguments: json.RawMessage(query)}
		b.ReportAllocs()
		for b.Loop() {
			r, err := cs.CallTool(context.Background(), params)
			if err != nil || r.IsError {
				b.Fatalf("%v %+v", err, r)
			}
		}
	})
}
