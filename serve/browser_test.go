package serve

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval"
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
	out := runBrowserRaw(t, script, shotName, args...)
	var r browserResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
	return r
}

// runBrowserRaw is runBrowser returning the script's output undecoded.
func runBrowserRaw(t *testing.T, script, shotName string, args ...string) []byte {
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
	return out
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

// TestExplorerInBrowser: the search explorer, driven in headless Chromium
// with the key typed in, shows the results of the public search API with a
// bar per stage score, the threshold as a line on the score it applies to, the
// counts that say what the threshold dropped, and memory text as text: the
// one holding markup and a script handler is shown literally and runs
// nothing.
func TestExplorerInBrowser(t *testing.T) {
	testenv.RequireBrowser(t)
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"explorer-key-01"}
	url := startMemory(t, cfg, &fakeBackend{}, retrieval.DefaultConfig())
	hostile := `<img src=x onerror="window.__xss=1;alert(1)"><b>Caroline</b> said the support group helped`
	body, _ := json.Marshal(map[string]any{"namespace": "caroline", "memories": []map[string]string{
		{"id": "m1", "text": "Caroline went to an LGBTQ support group yesterday.", "time": "2026-11-20T10:00:00Z"},
		{"id": "m2", "text": "Caroline adopted a rescue cat.", "time": "2026-11-25T10:00:00Z"},
		{"id": "m3", "text": hostile, "time": "2026-11-28T10:00:00Z"},
		{"id": "m4", "text": "Melanie painted a sunset.", "time": "2026-11-29T10:00:00Z"},
	}})
	if r := postJSON(t, url+"/v1/memories", string(body), "Authorization", "Bearer explorer-key-01"); r.code != http.StatusCreated {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	var r struct {
		browserResult
		Results []struct {
			Text           string   `json:"text"`
			Stages         []string `json:"stages"`
			ThresholdLines int      `json:"thresholdLines"`
		} `json:"results"`
		Counts   map[string]int `json:"counts"`
		Status   string         `json:"status"`
		Injected bool           `json:"injected"`
	}
	raw := runBrowserRaw(t, "ui_check.cjs", "ui.png", url, "explorer-key-01", "caroline", "Caroline support group", "0.5")
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(r.ConsoleErrors)+len(r.PageErrors)+len(r.FailedRequests) > 0 {
		t.Errorf("console errors %q, page errors %q, failed requests %q", r.ConsoleErrors, r.PageErrors, r.FailedRequests)
	}
	if r.Injected {
		t.Error("memory text was parsed as HTML or ran script")
	}
	if len(r.Results) == 0 || r.Counts["returned"] != len(r.Results) || r.Counts["above threshold"] != len(r.Results) ||
		r.Counts["retrieved"] <= r.Counts["above threshold"] {
		t.Errorf("results %d, counts %v: want the threshold to drop some and every kept one shown (status %q)", len(r.Results), r.Counts, r.Status)
	}
	sawHostile := false
	for i, res := range r.Results {
		if !slices.Contains(res.Stages, "score") || !slices.Contains(res.Stages, "recency") || !slices.Contains(res.Stages, "lexical") || len(res.Stages) < 3 || res.ThresholdLines != 1 {
			t.Errorf("result %d: stages %v, %d threshold lines", i, res.Stages, res.ThresholdLines)
		}
		sawHostile = sawHostile || res.Text == hostile
	}
	if !sawHostile {
		t.Errorf("the memory with markup is not shown literally: %+v", r.Results)
	}
}
