package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSearch_Front: one search of a namespace of n memories on the
// embedded default (bbolt) through POST /v1/search and through MCP's
// memory_search on /mcp, same server, same run, over loopback HTTP. Both
// call Server.search, so the difference is the front's own cost:
// mcp_raw posts the JSON-RPC request as any client would and reads the
// answer with encoding/json (the server's cost), mcp is the Go SDK's
// client (its cost added). cpu-ns/op is the process's CPU per search.
func BenchmarkSearch_Front(b *testing.B) {
	url, _ := startMCP(b, DefaultConfig())
	for _, n := range []int{1000, 10000} {
		ns := fmt.Sprintf("bench%d", n)
		for start := 0; start < n; start += 1000 {
			var sb strings.Builder
			fmt.Fprintf(&sb, `{"namespace":%q,"memories":[`, ns)
			for i := start; i < start+1000; i++ {
				if i > start {
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
		}
		query := fmt.Sprintf(`{"namespace":%q,"query":"when does the release train leave for topic 12","top_k":10}`, ns)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchFronts(b, url, query) })
	}
}

func benchFronts(b *testing.B, url, query string) {
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
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
	b.Run("mcp_raw", func(b *testing.B) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":` + query + `}}`
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out struct {
				Result struct {
					IsError           bool `json:"isError"`
					StructuredContent struct{ Results []json.RawMessage }
				}
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.Result.IsError || len(out.Result.StructuredContent.Results) != 10 {
				b.Fatalf("%d %v %+v", resp.StatusCode, err, out)
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
		defer reportCPU(b)()
		for b.Loop() {
			r, err := cs.CallTool(context.Background(), params)
			if err != nil || r.IsError {
				b.Fatalf("%v %+v", err, r)
			}
		}
	})
}

// reportCPU reports the process's CPU time (user + system, server and
// client together) per operation as cpu-ns/op: on a busy machine wall time
// per op swings with the other load, CPU time much less. Call it as
// defer reportCPU(b)() before the loop.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
