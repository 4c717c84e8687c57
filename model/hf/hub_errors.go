package hf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Errors a download can be tested against with errors.Is.
var (
	// ErrNotFound: the repo, revision or file does not exist (or is private
	// and no token was sent).
	ErrNotFound = errors.New("not found")
	// ErrAccess: the hub refused the request (401/403): no token, a bad
	// token, or a gated repo whose terms the token's owner has not accepted.
	ErrAccess = errors.New("access denied")
	// ErrChecksum: a downloaded file's size or sha256 differs from what the
	// hub announced. The partial file is deleted.
	ErrChecksum = errors.New("checksum mismatch")
)

// StatusError is an HTTP error response, explained for the user.
type StatusError struct {
	Method, URL string
	Status      int
	// Code and Message are the hub's X-Error-Code and X-Error-Message
	// headers (e.g. "RepoNotFound", "GatedRepo"), when sent.
	Code, Message string
	Repo, File    string
	HasToken      bool
	RetryAfter    time.Duration
}

func (e *StatusError) Error() string {
	what := e.Repo
	if e.File != "" {
		what = e.File + " in " + e.Repo
	}
	var msg string
	switch {
	case e.Status == http.StatusUnauthorized && !e.HasToken:
		msg = fmt.Sprintf("repo %s not found or gated: set a token", e.Repo)
	case e.Status == http.StatusUnauthorized:
		msg = fmt.Sprintf("token rejected for %s: it is invalid or cannot read this repo", e.Repo)
	case e.Status == http.StatusForbidden:
		msg = fmt.Sprintf("access to %s denied: for a gated repo, accept its terms on the hub and use a token of that account", e.Repo)
	case e.Status == http.StatusNotFound && e.Code == "RevisionNotFound":
		msg = fmt.Sprintf("revision not found in repo %s", e.Repo)
	case e.Status == http.StatusNotFound && e.Code == "EntryNotFound":
		msg = fmt.Sprintf("file %s not found", what)
	case e.Status == http.StatusNotFound && !e.HasToken:
		msg = fmt.Sprintf("%s not found (if it is private or gated, set a token)", what)
	case e.Status == http.StatusNotFound:
		msg = fmt.Sprintf("%s not found", what)
	default:
		msg = fmt.Sprintf("%s: HTTP %d %s", what, e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		msg += " (hub: " + e.Message + ")"
	}
	return fmt.Sprintf("%s %s: %s", e.Method, e.URL, msg)
}

// Unwrap maps the status to ErrNotFound or ErrAccess.
func (e *StatusError) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrAccess
	}
	return nil
}

func (e *StatusError) temporary() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

func (c *Client) statusError(resp *http.Response, repo, file string) *StatusError {
	e := &StatusError{
		Method: resp.Request.Method, URL: resp.Request.URL.Redacted(), Status: resp.StatusCode,
		Code: resp.Header.Get("X-Error-Code"), Message: resp.Header.Get("X-Error-Message"),
		Repo: repo, File: file, HasToken: c.cfg.Token != "",
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// transientError marks a failure worth retrying: a dropped connection, a
// stall, a server that answered a range request wrongly.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

var errStalled = errors.New("transfer stalled")

// transient wraps a transport error unless the caller's context ended,
// which is final.
func transient(ctx, attemptCtx context.Context, err error) error {
	if ctx.Err() != nil {
		if errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if errors.Is(context.Cause(attemptCtx), errStalled) {
		err = errStalled
	}
	// A name that does not resolve will not resolve on the next try
	// either (offline, or a typo in HF_ENDPOINT): fail at once.
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return fmt.Errorf("%w (the hub's host name does not resolve: offline, or check HF_ENDPOINT)", err)
	}
	return &transientError{err}
}

func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.temporary()
	}
	var te *transientError
	return errors.As(err, &te)
}

// retry runs op until it succeeds, fails for good, or has failed
// MaxRetries+1 times in a row without progress. It waits with exponential
// backoff and jitter, or as long as a Retry-After header asks (capped).
func (c *Client) retry(ctx context.Context, what string, op func() (progressed bool, err error)) error {
	const maxTotal = 1000 // even progress cannot loop forever
	fails := 0
	for total := 0; ; total++ {
		progressed, err := op()
		if err == nil {
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
		if progressed {
			fails = 0
		}
		if fails >= c.cfg.MaxRetries || total >= maxTotal {
			return fmt.Errorf("%s: giving up after %d attempts: %w", what, total+1, err)
		}
		wait := c.backoff(fails)
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > 0 {
			wait = min(se.RetryAfter, max(c.cfg.MaxBackoff, c.cfg.RetryBackoff))
		}
		fails++
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

func (c *Client) backoff(fails int) time.Duration {
	d := c.cfg.RetryBackoff
	for range fails {
		d *= 2
		if d >= c.cfg.MaxBackoff {
			d = c.cfg.MaxBackoff
			break
		}
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1) // jitter, so parallel clients spread out
}
