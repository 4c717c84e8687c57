// Package mcptest runs the official MCP TypeScript SDK's client
// (scripts/mcp/client.cjs) against rerankd for tests, over stdio or
// streamable HTTP, and checks its answers. The SDK is installed by
// scripts/setup_mcp.sh; without it the tests skip, and fail under CI.
package mcptest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

// Tools are the tools rerankd serves, in tools/list order.
const Tools = "memory_add,memory_delete,memory_forget,memory_get,memory_list,memory_search,memory_update,rerank"

// Step is one tool call and what its answer must be.
type Step struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Want is in the answer's text; IsError is whether it is a tool error.
	// Neither is sent.
	Want    string `json:"-"`
	IsError bool   `json:"-"`
}

// Call is a Step.
func Call(tool, args, want string, isError bool) Step {
	return Step{Tool: tool, Args: json.RawMessage(args), Want: want, IsError: isError}
}

// Answer is what the client prints.
type Answer struct {
	ConnectError string `json:"connectError"`
	Status       int    `json:"status"`
	Tools        []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	Results []Result `json:"results"`
}

// Result is one tool call's answer.
type Result struct {
	IsError           bool            `json:"isError"`
	Text              string          `json:"text"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// Run runs the client with args ("http URL [KEY]" or "stdio COMMAND
// ARG...") over steps; env is added to the client's environment, which a
// stdio server inherits.
func Run(t *testing.T, steps []Step, env []string, args ...string) Answer {
	t.Helper()
	argv, nodePath := testenv.MCPClient(t, args...)
	in, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+nodePath), env...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.String())
	}
	var a Answer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("client printed %q: %v\n%s", out, err, stderr.String())
	}
	return a
}

// Check fails t unless a connected, listed the tools with descriptions and
// object schemas, and answered each of steps as it wants.
func Check(t *testing.T, a Answer, steps []Step) {
	t.Helper()
	if a.ConnectError != "" {
		t.Fatalf("connect: %s", a.ConnectError)
	}
	var names []string
	for _, tl := range a.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema["type"] != "object" {
			t.Errorf("tool %s: description %q, schema %v", tl.Name, tl.Description, tl.InputSchema)
		}
	}
	if got := strings.Join(names, ","); got != Tools {
		t.Errorf("tools %s, want %s", got, Tools)
	}
	if len(a.Results) != len(steps) {
		t.Fatalf("%d results for %d steps", len(a.Results), len(steps))
	}
	for i, s := range steps {
		r := a.Results[i]
		if r.IsError != s.IsError || !strings.Contains(r.Text, s.Want) || len(r.StructuredContent) == 0 || string(r.StructuredContent) == "null" {
			t.Errorf("%s %s: isError %v %q (structured %s), want isError %v containing %q", s.Tool, s.Args, r.IsError, r.Text, r.StructuredContent, s.IsError, s.Want)
		}
	}
}

// Scenario is the walk both transports take: add, search, list, rerank,
// delete, then bad arguments, each a tool error with the HTTP API's
// message. Memory tools use the server's default namespace.
func Scenario() []Step {
	return []Step{
		Call("memory_add", `{"id":"m1","text":"the release train leaves every second Tuesday"}`, `"id":"m1"`, false),
		Call("memory_add", `{"namespace":"other","id":"o1","text":"unrelated note"}`, `"namespace":"other"`, false),
		Call("memory_search", `{"query":"when does the release train leave","top_k":3}`, "second Tuesday", false),
		Call("memory_list", `{"limit":5}`, `"id":"m1"`, false),
		Call("rerank", `{"query":"release","documents":["lunch menu","release train schedule"],"top_n":1}`, `"index":1`, false),
		Call("memory_delete", `{"id":"m1"}`, `"deleted":true`, false),
		Call("memory_delete", `{"id":"m1"}`, "not found", true),
		Call("memory_add", `{"text":7}`, `field "text": got JSON number, want a JSON string`, true),
		Call("memory_search", `{"query":"q","top_k":0}`, "top_k 0: want 1..1000", true),
		Call("memory_list", `{"limit":5000}`, "limit 5000: want an integer in 1..1000", true),
		Call("rerank", `{"query":"","documents":["a"]}`, "query must not be empty", true),
	}
}
