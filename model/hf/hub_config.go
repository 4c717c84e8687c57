package hf

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// Config configures a hub Client. Start from DefaultConfig and override
// fields; the package reads no environment variables, so the CLI maps
// HF_ENDPOINT and HF_TOKEN in here.
type Config struct {
	// Endpoint is the hub's base URL: https://huggingface.co, a mirror, or
	// a test server. A path prefix is kept ("https://mirror.example/hf").
	Endpoint string
	// Token is a Hugging Face access token, sent as "Authorization: Bearer"
	// (only to the hub itself: redirects to other hosts drop it). Gated and
	// private repos need one.
	Token string
	// Revision is the branch, tag or commit to download. Files are fetched
	// at the commit the revision resolves to, so a push mid-download cannot
	// mix two versions.
	Revision string
	// CacheDir holds downloads, one folder per repo and commit:
	// CacheDir/owner--name/<commit>/. Required. This is not the
	// huggingface_hub cache layout (no blobs or symlinks); do not point it
	// at ~/.cache/huggingface/hub.
	CacheDir string
	// Patterns are extra path.Match globs (matched against the repo path,
	// e.g. "*.txt" or "onnx/*") of files to fetch beside the defaults.
	Patterns []string
	// HTTPClient, if set, is used as is; its Timeout, if any, must allow for
	// multi-gigabyte bodies. When nil one is built from the timeouts below.
	HTTPClient *http.Client
	// ConnectTimeout bounds dialing plus the TLS handshake.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers once a request is sent.
	HeaderTimeout time.Duration
	// StallTimeout aborts, then retries, a request that receives no body
	// bytes for this long; 0 disables it. Bounding stalls instead of whole
	// requests lets a slow link finish a large file.
	StallTimeout time.Duration
	// MaxRetries is how often a request is retried after a 5xx, 429, stall
	// or connection error, waiting RetryBackoff, then twice that, up to
	// MaxBackoff. A download that made progress before failing resumes
	// where it stopped and starts counting afresh.
	MaxRetries   int
	RetryBackoff time.Duration
	MaxBackoff   time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Progress, if set, is called from the goroutine running Download as
	// each file arrives, with bytes done and the total (-1 when the server
	// does not say). Each file's last call has done == total, including
	// files already present.
	Progress func(file string, done, total int64)
}

// DefaultConfig returns a Config for huggingface.co at "main", with
// timeouts and retries suited to multi-gigabyte files. CacheDir is left
// for the caller.
func DefaultConfig() Config {
	return Config{
		Endpoint:       "https://huggingface.co",
		Revision:       "main",
		ConnectTimeout: 30 * time.Second,
		HeaderTimeout:  60 * time.Second,
		StallTimeout:   60 * time.Second,
		MaxRetries:     5,
		RetryBackoff:   time.Second,
		MaxBackoff:     30 * time.Second,
		UserAgent:      "rerankd",
	}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if u, err := url.Parse(c.Endpoint); err != nil {
		bad("Endpoint %q is not a URL", RedactEndpoint(c.Endpoint))
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		bad("Endpoint %q: want an http(s) URL with a host and no query, like https://huggingface.co", RedactEndpoint(c.Endpoint))
	}
	if strings.ContainsAny(c.Token, " \t\r\n") {
		bad("Token contains whitespace (a stray newline from a token file?)")
	}
	switch {
	case c.Revision == "":
		bad("Revision is empty (use \"main\")")
	case c.Revision == "." || c.Revision == ".." || strings.ContainsAny(c.Revision, "\x00\r\n"):
		bad("Revision %q is not a valid branch, tag or commit", c.Revision)
	}
	if c.CacheDir == "" {
		bad("CacheDir is required")
	}
	for _, p := range c.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			bad("pattern %q: %w", p, err)
		}
	}
	for name, d := range map[string]time.Duration{
		"ConnectTimeout": c.ConnectTimeout, "HeaderTimeout": c.HeaderTimeout, "StallTimeout": c.StallTimeout,
		"RetryBackoff": c.RetryBackoff, "MaxBackoff": c.MaxBackoff,
	} {
		if d < 0 {
			bad("%s must be >= 0, got %v", name, d)
		}
	}
	if c.MaxRetries < 0 || c.MaxRetries > 100 {
		bad("MaxRetries must be in 0..100, got %d", c.MaxRetries)
	}
	if c.MaxBackoff < c.RetryBackoff {
		bad("MaxBackoff %v is below RetryBackoff %v", c.MaxBackoff, c.RetryBackoff)
	}
	return errors.Join(errs...)
}

// httpClient returns the configured client, or one with the timeouts set
// on its transport (never a whole-request timeout).
func (c Config) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // no environment lookup (HTTPS_PROXY): pass an HTTPClient to use a proxy
	if c.ConnectTimeout > 0 {
		t.DialContext = (&net.Dialer{Timeout: c.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = c.ConnectTimeout
	}
	t.ResponseHeaderTimeout = c.HeaderTimeout
	return &http.Client{Transport: t, CheckRedirect: safeRedirect}
}

// safeRedirect follows the hub's redirects (to its CDN on another host:
// net/http drops the Authorization header there) but not from https to
// http, nor from a public host into this machine or its network (a
// redirect to 127.0.0.1 or 10.x would reach services no hub should).
func safeRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[0].URL
	if from.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refused a redirect from https to %s (%s)", req.URL.Scheme, req.URL.Redacted())
	}
	if !privateHost(from.Hostname()) && privateHost(req.URL.Hostname()) {
		return fmt.Errorf("refused a redirect from %s into a loopback or private address (%s)", from.Host, req.URL.Host)
	}
	return nil
}

// privateHost reports a loopback, private or link-local host ("localhost"
// included); names other than that are taken as public.
func privateHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
}
