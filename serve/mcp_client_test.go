package serve

import (
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/mcptest"
)

// TestMCPTypeScriptClientHTTP: the official TypeScript SDK's client on
// /mcp: the scenario with an unscoped key, a 401 without one, and a scoped
// key refused another namespace.
func TestMCPTypeScriptClientHTTP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"alice-key-123", "admin-key-789"}
	cfg.KeyScopes = map[string][]string{"alice-key-123": {"alice"}}
	url, _ := startMCP(t, cfg)
	t.Run("scenario", func(t *testing.T) {
		steps := mcptest.Scenario()
		mcptest.Check(t, mcptest.Run(t, steps, nil, "http", url+"/mcp", "admin-key-789"), steps)
	})
	t.Run("no key", func(t *testing.T) {
		a := mcptest.Run(t, nil, nil, "http", url+"/mcp")
		if a.Status != 401 || !strings.Contains(a.ConnectError, "missing or invalid API key") {
			t.Fatalf("connect without a key: %+v", a)
		}
	})
	t.Run("scope", func(t *testing.T) {
		steps := []mcptest.Step{
			mcptest.Call("memory_add", `{"namespace":"alice","text":"mine"}`, `"namespace":"alice"`, false),
			mcptest.Call("memory_search", `{"namespace":"bob","query":"q"}`, `this API key may not use namespace "bob"`, true),
		}
		mcptest.Check(t, mcptest.Run(t, steps, nil, "http", url+"/mcp", "alice-key-123"), steps)
	})
}
