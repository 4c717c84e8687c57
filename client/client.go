package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rerankd/rerankd/api"
)

// Config configures a Client. Zero fields take the defaults of
// DefaultConfig, except BaseURL, which is required.
type Config struct {
	// BaseURL is the server's address, e.g. "http://127.0.0.1:8080".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer KEY" when set.
	APIKey string
	// HTTPClient sends the requests; http.DefaultClient when nil. Its
	// Timeout, if any, bounds each attempt.
	HTTPClient *http.Client
	// MaxRetries bounds the retries after a 429 or 503 (default 4; -1
	// turns retries off).
	MaxRetries int
	// RetryBudget bounds the total time spent waiting between attempts
	// (default 30 s): a Retry-After that would go past it is not waited
	// for.
	RetryBudget time.Duration
	// RetryBase is the first wait when the server sends no Retry-After;
	// each further one doubles (default 200 ms).
	RetryBase time.Duration
	// UserAgent is sent as User-Agent (default "rerankd-go-client").
	UserAgent string
}

// DefaultConfig returns the defaults for baseURL.
func DefaultConfig(baseURL string) Config {
	return Config{BaseURL: baseURL, MaxRetries: 4, RetryBudget: 30 * time.Second, RetryBase: 200 * time.Millisecond, UserAgent: "rerankd-go-client"}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base URL %q: want http(s)://host[:port][/prefix]", c.BaseURL))
	}
	if c.MaxRetries < -1 {
		errs = append(errs, fmt.Errorf("max retries %d: want >= 0, or -1 for none", c.MaxRetries))
	}
	if c.RetryBudget < 0 || c.RetryBase < 0 {
		errs = append(errs, fmt.Errorf("retry budget %v and base %v: want >= 0", c.RetryBudget, c.RetryBase))
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		errs = append(errs, errors.New("API key contains a line break"))
	}
	return errors.Join(errs...)
}

// Client calls one rerankd server.
type Client struct {
	cfg  Config
	base string
	http *http.Client
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a client for cfg, with defaults filled in for zero fields.
func New(cfg Config) (*Client, error) {
	d := DefaultConfig(cfg.BaseURL)
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = d.MaxRetries
	}
	if cfg.RetryBudget == 0 {
		cfg.RetryBudget = d.RetryBudget
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = d.RetryBase
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = d.UserAgent
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), http: hc, sleep: sleepCtx}, nil
}

// Error is a non-2xx answer.
type Error struct {
	Status int // HTTP status
	// Type is the server's error_type (e.g. "validation", "overloaded");
	// empty when the body was not rerankd's error shape.
	Type    string
	Message string
	// RetryAfter is the wait the server asked for, if any.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent.
	Attempts int
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Type != "" {
		return fmt.Sprintf("rerankd: %d %s: %s", e.Status, e.Type, msg)
	}
	return fmt.Sprintf("rerankd: %d: %s", e.Status, msg)
}

// Temporary reports whether the server said to come back later (429, 503).
func (e *Error) Temporary() bool { return retryable(e.Status) }

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// do sends method path with body (JSON-encoded unless nil) and decodes a
// 2xx answer into out (unless nil), retrying on 429/503 as the package
// documents.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("rerankd %s %s: encode request: %w", method, path, err)
		}
	}
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, method, path, payload)
		if err != nil {
			return fmt.Errorf("rerankd %s %s: %w", method, path, err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			defer func() { _ = resp.Body.Close() }()
			if out == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				return nil
			}
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				return fmt.Errorf("rerankd %s %s: decode answer: %w", method, path, err)
			}
			return nil
		}
		apiErr := readError(resp, attempt)
		if !retryable(apiErr.Status) || attempt > c.cfg.MaxRetries {
			return apiErr
		}
		wait := apiErr.RetryAfter
		if wait <= 0 {
			wait = c.cfg.RetryBase << min(attempt-1, 20)
		}
		if waited+wait > c.cfg.RetryBudget {
			return apiErr
		}
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("rerankd %s %s: waiting to retry after %w: %w", method, path, apiErr, err)
		}
		waited += wait
	}
}

func (c *Client) send(ctx context.Context, method, path string, payload []byte) (*http.Response, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return c.http.Do(req)
}

func readError(resp *http.Response, attempt int) *Error {
	defer func() { _ = resp.Body.Close() }()
	e := &Error{Status: resp.StatusCode, Attempts: attempt, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var b api.Error
	if json.Unmarshal(data, &b) == nil && (b.Error != "" || b.Message != "") {
		e.Type, e.Message = b.ErrorType, b.Message
		if e.Message == "" {
			e.Message = b.Error
		}
		return e
	}
	// OpenAI's shape, on /v1/embeddings and /v1/models.
	var o api.OpenAIError
	if json.Unmarshal(data, &o) == nil && o.Error.Message != "" {
		e.Message = o.Error.Message
		if o.Error.Code != nil {
			e.Type = *o.Error.Code
		}
		return e
	}
	e.Message = strings.TrimSpace(string(data))
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 10.2.3);
// 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 || s > int64(24*time.Hour/time.Second) {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
