package hf

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDownloadInfoStall: a model-info reply that announces 100,000 bytes, sends
// 6 and stops is cut by the stall timeout and retried, then given up,
// instead of being waited on forever.
func TestDownloadInfoStall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write([]byte(`{"id":`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.CacheDir = srv.URL, t.TempDir()
	cfg.StallTimeout, cfg.MaxRetries = 200*time.Millisecond, 1
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Info(context.Background(), "owner/repo"); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stall") {
			t.Fatalf("error %v, want the stall named", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Info still waiting 30 s after a reply stalled (stall timeout 200 ms)")
	}
}

// TestDownloadEndpointCredentials: a password in HF_ENDPOINT is sent as Basic auth
// to the endpoint's host and appears in no message.
func TestDownloadEndpointCredentials(t *testing.T) {
	var gotUser, gotPass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.Endpoint = strings.Replace(srv.URL, "http://", "http://alice:SECRETPW@", 1)
	cfg.CacheDir, cfg.MaxRetries = t.TempDir(), 0
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Info(context.Background(), "owner/repo")
	if err == nil || strings.Contains(err.Error(), "SECRETPW") {
		t.Fatalf("error %v: want a failure without the password", err)
	}
	if gotUser != "alice" || gotPass != "SECRETPW" {
		t.Errorf("server saw Basic auth %q:%q", gotUser, gotPass)
	}
	// A transport error (nothing listening) names the host, not the password.
	cfg.Endpoint = "http://alice:SECRETPW@127.0.0.1:1"
	c, err = NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Info(context.Background(), "owner/repo"); err == nil || strings.Contains(err.Error(), "SECRETPW") {
		t.Fatalf("transport error %v shows the password", err)
	}
	if got := RedactEndpoint("http://alice:SECRETPW@mirror"); strings.Contains(got, "SECRETPW") {
		t.Errorf("RedactEndpoint = %q", got)
	}
	bad := DefaultConfig()
	bad.Endpoint = "ftp://alice:SECRETPW@mirror"
	if err := bad.Validate(); err == nil || strings.Contains(err.Error(), "SECRETPW") {
		t.Errorf("Validate: %v", err)
	}
}

// TestDNSFailureFailsFast: a host name that does not resolve is not
// retried (offline, the review saw 20 s of retries).
func TestDNSFailureFailsFast(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.CacheDir = "http://no-such-host.invalid", t.TempDir()
	cfg.MaxRetries, cfg.RetryBackoff = 5, 2*time.Second
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Info(context.Background(), "owner/repo")
	if err == nil || !strings.Contains(err.Error(), "does not resolve") {
		t.Fatalf("error %v, want the name named as unresolvable", err)
	}
	if took := time.Since(start); took > cfg.RetryBackoff {
		t.Errorf("took %v: retried (backoff %v)", took, cfg.RetryBackoff)
	}
}

// TestSafeRedirect: the hub's cross-host CDN redirects are followed; a
// downgrade to http and a jump from a public host into loopback or a
// private network are not.
func TestSafeRedirect(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"https://huggingface.co/o/r/resolve/main/model.safetensors", "https://cdn-lfs.hf.co/x?sig=1", true},
		{"http://127.0.0.1:8080/o/r/resolve/main/a", "http://127.0.0.1:9090/a", true}, // a local mirror and its CDN
		{"https://huggingface.co/a", "http://cdn-lfs.hf.co/a", false},
		{"https://huggingface.co/a", "https://127.0.0.1/admin", false},
		{"http://mirror.example/a", "http://10.0.0.5/a", false},
		{"http://mirror.example/a", "http://localhost:6379/", false},
	} {
		from, _ := http.NewRequest(http.MethodGet, c.from, nil)
		to, _ := http.NewRequest(http.MethodGet, c.to, nil)
		if err := safeRedirect(to, []*http.Request{from}); (err == nil) != c.ok {
			t.Errorf("%s -> %s: %v, want ok=%v", c.from, c.to, err, c.ok)
		}
	}
}

// TestDownloadConfigSizeCap: a config.json announced at 64 MiB is refused before
// it is stored; weights have no such bound.
func TestDownloadConfigSizeCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "67108864")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(make([]byte, 1<<20))
	}))
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.CacheDir, cfg.MaxRetries = srv.URL, t.TempDir(), 0
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = c.downloadFile(context.Background(), "owner/repo", "main", "config.json", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "more than such a file can be") {
		t.Fatalf("64 MiB config.json: %v", err)
	}
	if fileSizeLimit("model-00001-of-00002.safetensors") != -1 || fileSizeLimit("tokenizer.json") < 64<<20 {
		t.Error("weights must be unbounded and tokenizer.json allowed tens of MB")
	}
}
