package serve

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

var updateScreens = flag.Bool("update", false, "rewrite the screenshots in docs/screenshots from the browser tests")

// screenshotDir holds the screenshots the browser tests take (-update).
const screenshotDir = "../docs/screenshots"

// browserResult is what scripts/browser/*.cjs print.
type browserResult struct {
	ConsoleErrors  []string `json:"consoleErrors"`
	PageErrors     []string `json:"pageErrors"`
	FailedRequests []string `json:"failedRequests"`
	Status         int      `json:"status"`
	Body           string   `json:"body"`
}

// runBrowser runs a scripts/browser script with args and decodes its
// answer; the screenshot it takes is copied to docs/screenshots with
// -update.
func runBrowser(t *testing.T, script, shotName string, args ...string) browserResult {
	t.Helper()
	testenv.RequireBrowser(t)
	shot := filepath.Join(t.TempDir(), shotName)
	cmd := exec.Command("node", append([]string{filepath.Join("..", "scripts", "browser", script)}, append(args, shot)...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+testenv.BrowserNodePath())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	var r browserResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
	if png, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("no PNG screenshot (%v)", err)
	} else if *updateScreens {
		if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, shotName), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestDocsPageInBrowser: in headless Chromium the docs page loads with no
// console or page errors and no failed request, and "Try it out" on POST
// /rerank, with the key entered under Authorize, shows the server's
// results.
func TestDocsPageInBrowser(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"browser-key-0001"}
	url := start(t, cfg, &fakeBackend{})
	r := runBrowser(t, "docs_check.cjs", "docs.png", url, "browser-key-0001")
	if len(r.ConsoleErrors)+len(r.PageErrors)+len(r.FailedRequests) > 0 {
		t.Errorf("console errors %q, page errors %q, failed requests %q", r.ConsoleErrors, r.PageErrors, r.FailedRequests)
	}
	if r.Status != 200 || !strings.Contains(r.Body, `"results"`) || !strings.Contains(r.Body, `"relevance_score"`) {
		t.Errorf("try it out: status %d, body %q", r.Status, r.Body)
	}
}
