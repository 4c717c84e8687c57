package remote

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
	"sync/atomic"
	"time"
)

// Transport is how requests reach a server: where, with which key, how
// many at once and how failures are retried. The zero values of the
// numeric fields are not defaults: start from DefaultTransport.
type Transport struct {
	// URL is the endpoint. A URL with no path gets the API's usual one
	// (/v1/rerank, /rerank, /v1/embeddings).
	URL string
	// Key, when set, is sent as "Authorization: Bearer Key".
	Key string
	// Concurrency bounds the requests in flight (>= 1).
	Concurrency int
	// Timeout bounds one attempt (> 0); a timed-out attempt is retried.
	Timeout time.Duration
	// Retries is how many times a failed attempt is tried again (>= 0).
	Retries int
	// Backoff is the first wait before a retry, doubled each time up to
	// MaxBackoff; a server's Retry-After (429, 503) replaces it, honoured
	// up to MaxRetryAfter.
	Backoff, MaxBackoff time.Duration
	// Cache keeps results on disk (nil: none).
	Cache *Cache
	// Client sends the requests (nil: a client of its own).
	Client *http.Client
}

// MaxRetryAfter bounds the wait a server's Retry-After can ask for.
const MaxRetryAfter = 10 * time.Minute

// DefaultTransport returns the defaults: 4 requests in flight, 60 s an
// attempt, 5 retries from 500 ms up to 30 s apart.
func DefaultTransport() Transport {
	return Transport{Concurrency: 4, Timeout: 60 * time.Second, Retries: 5, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second}
}

// Validate reports every problem at once; fields are named as in the
// configuration ("url", "concurrency", ...).
func (t Transport) Validate() error {
	var errs []error
	if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("url %q: want an http:// or https:// URL", t.URL))
	}
	if t.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: want >= 1", t.Concurrency))
	}
	if t.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %v: want > 0", t.Timeout))
	}
	if t.Retries < 0 {
		errs = append(errs, fmt.Errorf("retries %d: want >= 0", t.Retries))
	}
	if t.Backoff <= 0 || t.MaxBackoff < t.Backoff {
		errs = append(errs, fmt.Errorf("backoff %v up to %v: want 0 < backoff <= max backoff", t.Backoff, t.MaxBackoff))
	}
	return errors.Join(errs...)
}

// flatten lists the problems of a joined error (none for nil), so that
// configurations joining their parts' problems report one flat list.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// endpoint returns URL, with path when it has none.
func (t Transport) endpoint(path string) string {
	u, err := url.Parse(t.URL)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return t.URL
	}
	u.Path = path
	return u.String()
}

// StatusError is a server's answer that is not 2xx, after any retries.
type StatusError struct {
	URL    string
	Status int
	// Msg is the server's message: the "message", "error" or "detail"
	// field of a JSON body, else the body's start.
	Msg string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.URL, e.Status, e.Msg)
}

// client is a Transport in use: its semaphore and HTTP client.
type client struct {
	t    Transport
	url  string
	sem  chan struct{}
	http *http.Client

	// retried counts attempts tried again (tests and the summary read it).
	retried atomic.Int64
}

func newClient(t Transport, path string) *client {
	hc := t.Client
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = t.Concurrency
		hc = &http.Client{Transport: tr}
	}
	return &client{t: t, url: t.endpoint(path), sem: make(chan struct{}, t.Concurrency), http: hc}
}

// post sends body as JSON and decodes a 2xx answer into out, retrying as
// the package comment says.
func (c *client) post(ctx context.Context, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	wait := c.t.Backoff
	for attempt := 0; ; attempt++ {
		retryAfter, err := c.once(ctx, raw, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) || attempt >= c.t.Retries {
			if attempt > 0 {
				return fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return err
		}
		d := wait
		if retryAfter > 0 {
			d = min(retryAfter, MaxRetryAfter)
		}
		wait = min(2*wait, c.t.MaxBackoff)
		c.retried.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// attemptError is a failed attempt that may succeed when tried again.
type attemptError struct{ err error }

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var a *attemptError
	return errors.As(err, &a)
}

// once is one attempt; it holds a slot of the semaphore while it runs. It
// returns the server's Retry-After, when a 429 or 503 gave one.
func (c *client) once(ctx context.Context, raw []byte, out any) (time.Duration, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-c.sem }()
	actx, cancel := context.WithTimeout(ctx, c.t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.t.Key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &attemptError{fmt.Errorf("%s: %w", c.url, err)} // refused, reset, timed out
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &attemptError{fmt.Errorf("%s: reading the answer: %w", c.url, err)}
	}
	if resp.StatusCode/100 != 2 {
		se := &StatusError{URL: c.url, Status: resp.StatusCode, Msg: serverMessage(body)}
		switch {
		case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
			return parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), &attemptError{se}
		}
		return 0, se
	}
	if err := json.Unmarshal(body, out); err != nil {
		return 0, fmt.Errorf("%s: answer is not the API's JSON: %w", c.url, err)
	}
	return 0, nil
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date
// (0: none or unreadable), at most MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		if s > MaxRetryAfter.Seconds() { // also keeps 1e10 and Inf from overflowing
			return MaxRetryAfter
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxRetryAfter)
	}
	return 0
}

// serverMessage picks the message out of an error body.
func serverMessage(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		for _, k := range []string{"message", "error", "detail"} {
			switch v := m[k].(type) {
			case string:
				return v
			case map[string]any: // OpenAI: {"error": {"message": ...}}
				if s, ok := v["message"].(string); ok {
					return s
				}
			}
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}
