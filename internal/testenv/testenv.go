// Package testenv locates the run-time files scripts/setup.sh installs, for
// tests only (production code gets paths from cmd/ flags). Tests that need
// them fail with a message naming the fix rather than skip: a skipped parity
// or runtime test would prove nothing in CI, where make test installs them.
//
// It is the one package outside cmd/internal/paths that reads the
// environment (TestOneEnvironmentHome there), and it reads only what tests
// need: RERANKD_CACHE, XDG_CACHE_HOME and HOME (CacheDir, the same rule as
// paths.CacheDir), RERANKD_TOKENIZER (TokenizerDir), ORT_LIB (ORTLib), CI
// (InCI), RERANKD_LOCOMO (LoCoMo, LoCoMoOr), BROWSER_NODE_PATH
// (BrowserNodePath), MCP_NODE_PATH (MCPNodePath) and RERANKD_PG_BIN (PGBin,
// for internal/pgtest). A
// test's own re-exec markers (a child process told what to do, as in the
// crash tests) stay in its _test.go files.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// CacheDir mirrors scripts/setup.sh: $RERANKD_CACHE, else
// ${XDG_CACHE_HOME:-~/.cache}/rerankd. It is cmd/internal/paths.CacheDir's
// rule, which this package cannot import; TestCacheRulesAgree there holds
// the two (and this file's ORTLib and TokenizerDir) to the same answers.
func CacheDir() string {
	if d := os.Getenv("RERANKD_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "rerankd")
}

// TokenizerDir is $RERANKD_TOKENIZER or the Qwen3 tokenizer in the cache.
func TokenizerDir() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "tokenizers", "qwen3")
}

// ORTLib is $ORT_LIB or the ONNX Runtime library in the cache, in the
// folder of the release scripts/setup.sh installs (its ORT_VERSION, which
// TestORTVersionOneSource in cmd/internal/paths holds to
// model.RequiredORT; this package cannot import model, whose tests use it).
func ORTLib() string {
	if p := os.Getenv("ORT_LIB"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "onnxruntime", setupORTVersion(), "libonnxruntime.so.1")
}

// setupORTVersion is the ORT_VERSION that scripts/setup.sh installs, or
// "unknown" when the script cannot be read (Require then fails, naming
// the path and setup.sh).
var setupORTVersion = sync.OnceValue(func() string {
	root, err := moduleRoot()
	if err != nil {
		return "unknown"
	}
	data, err := os.ReadFile(filepath.Join(root, "scripts", "setup.sh"))
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ORT_VERSION="); ok && v != "" {
			return v
		}
	}
	return "unknown"
})

// Require fails tb unless path exists.
func Require(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("%v: run scripts/setup.sh (make test does)", err)
	}
}

// InCI reports whether the tests run under CI (CI=true, as .ci/run and
// scripts/fresh_check.sh set it).
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipUnlessCI skips tb with why and how to enable the test; under CI it
// fails instead, since a test CI skips proves nothing there.
func SkipUnlessCI(tb testing.TB, why, enable string) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("%s (CI=true: this test must run; %s)", why, enable)
	}
	tb.Skipf("%s: skipped; %s", why, enable)
}

// LoCoMoEnv names the LoCoMo development split's folder. The data is
// CC BY-NC and never in the repository; make test sets it to ../shared/locomo
// when that folder exists.
const LoCoMoEnv = "RERANKD_LOCOMO"

// LoCoMo returns the dev split's folder ($RERANKD_LOCOMO, checked to hold
// 26.json). Unset, the test is skipped with how to enable it, or fails
// under CI; set to a folder without the data, it fails.
func LoCoMo(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(LoCoMoEnv)
	if dir == "" {
		SkipUnlessCI(tb, LoCoMoEnv+" is unset", "set "+LoCoMoEnv+" to the folder holding the LoCoMo dev split (26.json, 30.json, 41.json, 42.json, 43.json); make test sets it to ../shared/locomo when that exists")
	}
	if _, err := os.Stat(filepath.Join(dir, "26.json")); err != nil {
		tb.Fatalf("LoCoMo dev split not found (%v): %s must name the folder holding 26.json, 30.json, 41.json, 42.json, 43.json", err, LoCoMoEnv)
	}
	return dir
}

// LoCoMoOr returns the dev split's folder when $RERANKD_LOCOMO is set, and
// fallback (small committed fixtures) otherwise, logging which it ran on.
// Under CI the real data is required, so the fixtures never stand in for it
// silently.
func LoCoMoOr(tb testing.TB, fallback string) string {
	tb.Helper()
	if os.Getenv(LoCoMoEnv) == "" && !InCI() {
		tb.Logf("%s unset: running on the fixtures in %s", LoCoMoEnv, fallback)
		return fallback
	}
	return LoCoMo(tb)
}

// BrowserNodePath is where scripts/setup_browser.sh installs playwright-core
// ($BROWSER_NODE_PATH, else the cache, under the version pinned in
// scripts/browser/package.json), for NODE_PATH; "" when that file cannot be
// read.
func BrowserNodePath() string {
	if p := os.Getenv("BROWSER_NODE_PATH"); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, "scripts", "browser", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if json.Unmarshal(data, &pkg) != nil || pkg.Dependencies["playwright-core"] == "" {
		return ""
	}
	return filepath.Join(CacheDir(), "tools", "browser", "playwright-core-"+pkg.Dependencies["playwright-core"], "node_modules")
}

// moduleRoot is the folder holding go.mod, above the test's folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Chromium is Debian's Chromium, which the browser tests drive.
const Chromium = "/usr/bin/chromium"

// RequireBrowser skips tb under -short (make test-short; Chromium and its
// node driver are among that tier's largest CPU costs, docs/testing.md),
// and otherwise skips it (fails it under CI) unless node, Chromium and
// playwright-core are installed.
func RequireBrowser(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("a real browser: skipped under -short (make test runs it)")
	}
	const enable = "run scripts/setup_browser.sh (make test does)"
	if _, err := os.Stat(Chromium); err != nil {
		SkipUnlessCI(tb, "no "+Chromium, enable)
	}
	if _, err := os.Stat(filepath.Join(BrowserNodePath(), "playwright-core", "package.json")); err != nil {
		SkipUnlessCI(tb, "playwright-core not installed at "+BrowserNodePath(), enable)
	}
	if _, err := exec.LookPath("node"); err != nil {
		SkipUnlessCI(tb, "no node on PATH", "install Node.js")
	}
}

// MCPNodePath is where scripts/setup_mcp.sh installs the MCP TypeScript SDK
// ($MCP_NODE_PATH, else the cache, under the version pinned in
// scripts/mcp/package.json), for NODE_PATH; "" when that file cannot be read.
func MCPNodePath() string {
	if p := os.Getenv("MCP_NODE_PATH"); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, "scripts", "mcp", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	const name = "@modelcontextprotocol/sdk"
	if json.Unmarshal(data, &pkg) != nil || pkg.Dependencies[name] == "" {
		return ""
	}
	return filepath.Join(CacheDir(), "tools", "mcp", "sdk-"+pkg.Dependencies[name], "node_modules")
}

// MCPClient is the command line of scripts/mcp/client.cjs (the TypeScript
// SDK's client) with args, and its NODE_PATH; it skips tb (fails it under
// CI) unless node and the SDK are installed.
func MCPClient(tb testing.TB, args ...string) (argv []string, nodePath string) {
	tb.Helper()
	const enable = "run scripts/setup_mcp.sh (make test does)"
	nodePath = MCPNodePath()
	if _, err := os.Stat(filepath.Join(nodePath, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		SkipUnlessCI(tb, "@modelcontextprotocol/sdk not installed at "+nodePath, enable)
	}
	if _, err := exec.LookPath("node"); err != nil {
		SkipUnlessCI(tb, "no node on PATH", "install Node.js")
	}
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return append([]string{"node", filepath.Join(root, "scripts", "mcp", "client.cjs")}, args...), nodePath
}

// PGBinEnv names a folder holding the PostgreSQL server binaries (initdb,
// postgres) for internal/pgtest, instead of its search.
const PGBinEnv = "RERANKD_PG_BIN"

// PGBin is $RERANKD_PG_BIN, "" when unset.
func PGBin() string { return os.Getenv(PGBinEnv) }

// ClientsNodePath is where scripts/setup_clients.sh installs the embedding
// tests' client SDKs ($CLIENTS_NODE_PATH, else the cache, under the first
// 16 hex digits of scripts/clients/package-lock.json's sha256), for
// NODE_PATH; "" when the lock cannot be read.
func ClientsNodePath() string {
	if p := os.Getenv("CLIENTS_NODE_PATH"); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, "scripts", "clients", "package-lock.json"))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return filepath.Join(CacheDir(), "tools", "clients", hex.EncodeToString(sum[:])[:16], "node_modules")
}

// EmbedClients is the command line of scripts/clients/embed.mjs (real
// client SDKs against the embedding routes) with args, and its NODE_PATH;
// it skips tb (fails it under CI) unless node and the SDKs are installed.
func EmbedClients(tb testing.TB, args ...string) (argv []string, nodePath string) {
	tb.Helper()
	const enable = "run scripts/setup_clients.sh (make test does)"
	nodePath = ClientsNodePath()
	for _, p := range []string{"openai", "@langchain/openai", "ai", "@ai-sdk/openai-compatible", "@huggingface/inference"} {
		if _, err := os.Stat(filepath.Join(nodePath, p, "package.json")); err != nil {
			SkipUnlessCI(tb, p+" not installed at "+nodePath, enable)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		SkipUnlessCI(tb, "no node on PATH", "install Node.js")
	}
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return append([]string{"node", filepath.Join(root, "scripts", "clients", "embed.mjs")}, args...), nodePath
}
