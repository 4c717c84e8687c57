package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/mcptest"
	"github.com/rerankd/rerankd/internal/pgtest"
)

// mcpStdio is the client's command line for `rerankd mcp ARGS` (this test
// binary standing in for rerankd).
func mcpStdio(args ...string) []string {
	return append([]string{"stdio", os.Args[0], "mcp"}, args...)
}

var asCLI = []string{"RERANKD_TEST_AS_CLI=1"}

// TestMCPStdioTypeScriptClient: the official TypeScript SDK's client runs
// the scenario against `rerankd mcp` over stdio on the embedded default.
func TestMCPStdioTypeScriptClient(t *testing.T) {
	steps := mcptest.Scenario()
	a := mcptest.Run(t, steps, asCLI, mcpStdio("--store", filepath.Join(t.TempDir(), "m.db"), "--namespace", "agent")...)
	mcptest.Check(t, a, steps)
	if !strings.Contains(string(a.Results[0].StructuredContent), `"namespace":"agent"`) {
		t.Fatalf("--namespace not the default: %s", a.Results[0].StructuredContent)
	}
}

func TestMCPFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad namespace", []string{"--namespace", "a/b"}, "--namespace"},
		{"bad store", []string{"--store", "http://example.com/db"}, "--store"},
		{"unknown flag", []string{"--nope"}, "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, append([]string{"mcp"}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 naming %s", code, errs, tc.want)
			}
		})
	}
}

// TestMCPSharedStore: on one PostgreSQL store, a memory written by an MCP
// replica (`rerankd mcp`) is found by an HTTP replica's POST /v1/search
// right after, and one written over HTTP is found by memory_search.
func TestMCPSharedStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two rerankd processes")
	}
	dbURL := pgtest.Shared(t).NewDB(t)
	rep := startReplica(t, dbURL)
	ctx := context.Background()
	if _, err := rep.c.AddMemories(ctx, api.AddMemoriesRequest{MemoryIn: api.MemoryIn{Namespace: "team", ID: "via-http",
		Text: "the staging database lives in Frankfurt"}}); err != nil {
		t.Fatal(err)
	}
	steps := []mcptest.Step{
		mcptest.Call("memory_search", `{"query":"where is the staging database"}`, `"id":"via-http"`, false),
		mcptest.Call("memory_add", `{"id":"via-mcp","text":"the deploy key rotates on Fridays"}`, `"id":"via-mcp"`, false),
	}
	mcptest.Check(t, mcptest.Run(t, steps, asCLI, mcpStdio("--store", dbURL, "--namespace", "team")...), steps)
	res, err := rep.c.Search(ctx, api.SearchRequest{Namespace: "team", Query: "when does the deploy key rotate"})
	if err != nil || len(res.Results) == 0 || res.Results[0].ID != "via-mcp" {
		t.Fatalf("HTTP search after the MCP write: %+v %v", res, err)
	}
}

// TestServeMCPRoute: `rerankd serve` answers the tools on /mcp, behind its
// API keys.
func TestServeMCPRoute(t *testing.T) {
	rep := startReplica(t, filepath.Join(t.TempDir(), "m.db"), "--api-key", "serve-key-123")
	if a := mcptest.Run(t, nil, nil, "http", rep.base+"/mcp"); a.Status != 401 {
		t.Fatalf("no key: %+v", a)
	}
	steps := []mcptest.Step{mcptest.Call("memory_add", `{"text":"hello"}`, `"namespace":"default"`, false)}
	mcptest.Check(t, mcptest.Run(t, steps, nil, "http", rep.base+"/mcp", "serve-key-123"), steps)
}
