package serve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// TestDocsServed: the docs page and its files answer without a key even on
// a server with keys, with their content types; the page's document is
// the same as /openapi.json; other /docs paths stay behind the key.
func TestDocsServed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"docs-test-key"}
	url := start(t, cfg, &fakeBackend{})
	for p, a := range docsAssets {
		r := do(t, http.MethodGet, url+p, "", "")
		if r.code != http.StatusOK || r.header.Get("Content-Type") != a.mime || len(r.body) == 0 {
			t.Errorf("%s: %d %q, %d bytes", p, r.code, r.header.Get("Content-Type"), len(r.body))
		}
		for h, want := range map[string]string{"Content-Security-Policy": pageCSP, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", p, h, got, want)
			}
		}
	}
	page := do(t, http.MethodGet, url+"/docs", "", "")
	for _, ref := range []string{"/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/init.js"} {
		if !bytes.Contains(page.body, []byte(ref)) {
			t.Errorf("page does not load %s", ref)
		}
	}
	if bytes.Contains(page.body, []byte("//cdn")) || bytes.Contains(page.body, []byte("https://")) {
		t.Error("page loads something from elsewhere")
	}
	spec := do(t, http.MethodGet, url+"/docs/openapi.json", "", "")
	if spec.code != http.StatusOK || !bytes.Equal(spec.body, openAPI) {
		t.Errorf("/docs/openapi.json: %d, same as openapi.json: %v", spec.code, bytes.Equal(spec.body, openAPI))
	}
	if r := do(t, http.MethodGet, url+"/docs/../info", "", ""); r.code != http.StatusUnauthorized {
		t.Errorf("/docs/../info without a key: %d, want 401", r.code)
	}
	if r := do(t, http.MethodGet, url+"/docs/other.js", "", ""); r.code != http.StatusUnauthorized {
		t.Errorf("/docs/other.js without a key: %d, want 401 (not a docs file)", r.code)
	}
}

// TestDocsChecksums: the embedded Swagger UI files are the vendored ones
// (serve/docs/swagger-ui/SHA256SUMS, written by
// scripts/vendor_swagger_ui.sh from the npm package).
func TestDocsChecksums(t *testing.T) {
	f, err := docsFiles.Open("docs/swagger-ui/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	checked := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		data, err := docsFiles.ReadFile("docs/swagger-ui/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		checked++
	}
	if checked != 3 {
		t.Errorf("%d files checked, want 3", checked)
	}
}
