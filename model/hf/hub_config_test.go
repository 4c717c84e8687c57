package hf

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.CacheDir = "/tmp/cache"
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config with a CacheDir: %v", err)
	}
	bad := Config{
		Endpoint: "ftp://x", Token: "hf_abc\n", Revision: "..", Patterns: []string{"[", "*.txt"},
		StallTimeout: -time.Second, MaxRetries: -1, RetryBackoff: time.Minute, MaxBackoff: time.Second,
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	// Every problem is reported at once.
	for _, want := range []string{
		"Endpoint", "Token contains whitespace", "Revision", "CacheDir is required", `pattern "["`,
		"StallTimeout must be >= 0", "MaxRetries", "MaxBackoff 1s is below RetryBackoff 1m0s",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if _, err := NewClient(bad); err == nil {
		t.Error("NewClient accepted an invalid config")
	}
}

func TestEndpointValidate(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"https://huggingface.co", true},
		{"http://127.0.0.1:8080/", true},
		{"https://mirror.example/hf", true},
		{"", false},
		{"huggingface.co", false},
		{"https://", false},
		{"https://h/?q=1", false},
		{"://bad", false},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		c.CacheDir, c.Endpoint = "/c", tt.endpoint
		if err := c.Validate(); (err == nil) != tt.ok {
			t.Errorf("Endpoint %q: err = %v, want ok = %v", tt.endpoint, err, tt.ok)
		}
	}
}

func TestValidateRepoID(t *testing.T) {
	tests := []struct {
		repo string
		ok   bool
	}{
		{"Qwen/Qwen3-Reranker-0.6B", true},
		{"gpt2", true},
		{"a_b/c.d-e", true},
		{"", false},
		{"a/b/c", false},
		{"../x", false},
		{"a/..", false},
		{"a--b/c", false},
		{"/abs", false},
		{"a/b c", false},
		{"a/" + strings.Repeat("x", 100), false},
	}
	for _, tt := range tests {
		if err := ValidateRepoID(tt.repo); (err == nil) != tt.ok {
			t.Errorf("ValidateRepoID(%q) = %v, want ok = %v", tt.repo, err, tt.ok)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in          string
		start, size int64
		ok          bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-0/*", 0, -1, true},
		{"bytes */200", 0, 0, false},
		{"bytes 5-9", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"bytes -1-2/3", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		start, size, ok := parseContentRange(tt.in)
		if ok != tt.ok || ok && (start != tt.start || size != tt.size) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %d, %d, %v", tt.in, start, size, ok, tt.start, tt.size, tt.ok)
		}
	}
}

func TestMetaFromHeaders(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		headers map[string]string
		final   bool
		size    int64
		sha     string
	}{
		{"lfs redirect", map[string]string{"X-Linked-Size": "42", "X-Linked-Etag": `"` + sha + `"`, "Content-Length": "0"}, false, 42, sha},
		{"git file", map[string]string{"Content-Length": "7", "ETag": `"` + strings.Repeat("1", 40) + `"`}, true, 7, ""},
		{"weak sha256 etag", map[string]string{"Content-Length": "7", "ETag": `W/"` + strings.ToUpper(sha) + `"`}, true, 7, sha},
		{"redirect without linked headers", map[string]string{"Content-Length": "0", "ETag": `"` + sha + `"`}, false, -1, ""},
		{"nothing", nil, true, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			m := metaFromHeaders(h, tt.final)
			if m.size != tt.size || m.sha256 != tt.sha {
				t.Errorf("got size %d sha %q, want %d %q", m.size, m.sha256, tt.size, tt.sha)
			}
		})
	}
}
