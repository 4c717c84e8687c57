package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/scoring"
)

const (
	stdioInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	stdioList = `{"jsonrpc":"2.0","id":"last","method":"tools/list"}` + "\n"
)

// runStdio runs an MCP session over the stdio transport on input and
// returns every line written, failing if the session does not end.
func runStdio(t *testing.T, backend scoring.Backend, input string, maxLine int) []map[string]any {
	t.Helper()
	srv, err := New(DefaultConfig(), backend, Limits{QueueSize: 64, BatchTokens: 4096, MaxBatch: 8}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := srv.NewMCP(MCPOptions{Namespace: "default", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- ms.Run(context.Background(), &StdioTransport{In: strings.NewReader(input), Out: &out, MaxLine: maxLine, Drain: 10 * time.Second})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("stdio session did not end after its input did")
	}
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("output line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestStdioBadFrames: each bad frame after initialize gets a JSON-RPC
// error and the session goes on to answer the next request.
func TestStdioBadFrames(t *testing.T) {
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	deepObj := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":` + strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000) + "}"
	for _, c := range []struct {
		name  string
		frame string
		code  float64
		id    any
	}{
		{"not JSON", "hello there", -32700, nil},
		{"truncated object", `{"jsonrpc":"2.0","id":5,"method":"tools/li`, -32700, nil},
		{"batch array", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, -32600, nil},
		{"20k-deep array", deep, -32600, nil},
		{"20k-deep params", deepObj, -32700, nil},
		{"line over the limit", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, -32600, nil},
		{"JSON but no message", `{"id":7,"hello":1}`, -32600, float64(7)},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"no/such"}`, -32601, float64(8)},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := runStdio(t, &fakeBackend{}, stdioInit+c.frame+"\n"+stdioList, 1<<20)
			if len(lines) != 3 {
				t.Fatalf("%d answers, want 3 (initialize, the error, tools/list): %v", len(lines), lines)
			}
			// Answers may come in any order: the SDK handles requests
			// concurrently.
			byID := map[any]map[string]any{}
			for _, l := range lines {
				if l["error"] != nil {
					if got := errCode(l); got != c.code || l["id"] != c.id {
						t.Errorf("answer %v: want code %v with id %v", l, c.code, c.id)
					}
					continue
				}
				byID[l["id"]] = l
			}
			if byID["last"] == nil || byID["last"]["result"] == nil || byID[float64(0)] == nil {
				t.Errorf("initialize and tools/list around the bad frame: %v", lines)
			}
		})
	}
}

// TestStdioDrainsAtEOF: requests still running when input ends are
// answered before the session ends.
func TestStdioDrainsAtEOF(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"rerank","arguments":{"query":"q","documents":["a","b"]}}}` + "\n"
	lines := runStdio(t, &fakeBackend{delay: 500 * time.Millisecond}, stdioInit+call, 1<<20)
	if len(lines) != 2 || lines[1]["id"] != "slow" || lines[1]["result"] == nil {
		t.Fatalf("answers %v: the in-flight tools/call was not answered", lines)
	}
}

// FuzzStdioFraming: any bytes after initialize end the session cleanly,
// with every line written valid JSON.
func FuzzStdioFraming(f *testing.F) {
	f.Add([]byte("hello\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rerank","arguments":{"query":"q","documents":[null,"a"]}}}` + "\n"))
	f.Add([]byte("\x00\xff\n\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lines := runStdio(t, &fakeBackend{}, stdioInit+string(in)+"\n"+stdioList, 4096)
		for _, l := range lines {
			if l["id"] == "last" && l["result"] != nil {
				return
			}
		}
		t.Fatalf("tools/list after %q not answered: %v", in, lines)
	})
}
