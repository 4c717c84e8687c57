package hf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rerankd/rerankd/internal/atomicfile"
)

// fileMeta is what the hub announces about a file before sending it.
type fileMeta struct {
	size   int64  // -1 when unknown
	sha256 string // lowercase hex, "" when unknown (git files carry a sha1 etag)
}

func (c *Client) resolveURL(repo, rev, file string) string {
	parts := strings.Split(file, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return c.endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(parts, "/")
}

// downloadFile fetches one repo file into dir unless a verified copy is
// there. Bytes go to file.incomplete (kept across runs, to resume), which
// is renamed only once its size and hash check out (atomicfile.Rename:
// fsynced, renamed, the folder fsynced), so a final name is always a
// complete file.
func (c *Client) downloadFile(ctx context.Context, repo, rev, file, dir string) error {
	u := c.resolveURL(repo, rev, file)
	dst := filepath.Join(dir, filepath.FromSlash(file))
	if err := ensureDir(dst); err != nil {
		return err
	}
	meta, err := c.metadata(ctx, repo, file, u)
	if err != nil {
		return err
	}
	limit := fileSizeLimit(file)
	if limit >= 0 && meta.size > limit {
		return fmt.Errorf("download %s from %s: the hub announces %d bytes, more than such a file can be (%d)", file, repo, meta.size, limit)
	}
	if complete(dst, meta) {
		c.progress(file, meta.size, meta.size)
		return nil
	}
	tmp := dst + ".incomplete"
	// Progress is bytes past the most the file ever held: a server that
	// sends a piece, then makes us restart, is not making progress.
	var best int64
	err = c.retry(ctx, "GET "+u, func() (bool, error) {
		_, err := c.fetchOnce(ctx, repo, file, u, tmp, &meta)
		progressed := false
		if st, serr := os.Stat(tmp); serr == nil && st.Size() > best {
			best, progressed = st.Size(), true
		}
		if err == nil && limit >= 0 && best > limit {
			err = fmt.Errorf("download %s from %s: more than %d bytes, more than such a file can be", file, repo, limit)
		}
		return progressed, err
	})
	if err != nil {
		return err
	}
	if err := verify(tmp, meta); err != nil {
		_ = os.Remove(tmp) // the next run must start afresh; the mismatch is the error
		return fmt.Errorf("download %s from %s: %w", file, repo, err)
	}
	if err := atomicfile.Rename(tmp, dst); err != nil {
		return fmt.Errorf("download %s: %w", file, err)
	}
	if st, err := os.Stat(dst); err == nil {
		c.progress(file, st.Size(), st.Size()) // also for empty or resumed-complete files
	}
	return nil
}

// metadata asks the hub (HEAD) for the file's size and sha256. LFS files
// answer with a redirect carrying X-Linked-Size and X-Linked-Etag; plain
// git files answer 200 with Content-Length and a sha1 ETag.
func (c *Client) metadata(ctx context.Context, repo, file, u string) (fileMeta, error) {
	meta := fileMeta{size: -1}
	err := c.retry(ctx, "HEAD "+u, func() (bool, error) {
		resp, err := c.send(ctx, ctx, c.head, http.MethodHead, u, nil)
		if err != nil {
			return false, err
		}
		closeBody(resp)
		switch {
		case resp.StatusCode == http.StatusMethodNotAllowed:
			return false, nil // learn what we can from the GET
		case resp.StatusCode >= 400:
			return false, c.statusError(resp, repo, file)
		}
		meta = metaFromHeaders(resp.Header, resp.StatusCode == http.StatusOK)
		return false, nil
	})
	return meta, err
}

func metaFromHeaders(h http.Header, final bool) fileMeta {
	m := fileMeta{size: -1}
	size := h.Get("X-Linked-Size")
	if size == "" && final {
		size = h.Get("Content-Length")
	}
	if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
		m.size = n
	}
	etag := h.Get("X-Linked-Etag")
	if etag == "" && final {
		etag = h.Get("ETag")
	}
	etag = strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	if sha256Pattern.MatchString(etag) {
		m.sha256 = strings.ToLower(etag)
	}
	return m
}

var sha256Pattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// fetchOnce makes one GET, resuming from the bytes already in tmp. It
// reports whether any bytes arrived, so retry can tell progress from a loop.
func (c *Client) fetchOnce(ctx context.Context, repo, file, u, tmp string, meta *fileMeta) (progressed bool, err error) {
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("download: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("download %s: %w", file, cerr)
		}
	}()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return false, fmt.Errorf("download: %w", err)
	}
	if meta.size >= 0 && have > meta.size { // stale or foreign bytes: start over
		if have, err = restart(f); err != nil {
			return false, err
		}
	}
	if meta.size >= 0 && have == meta.size {
		return false, nil // already complete; verify decides
	}

	attemptCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var stall *time.Timer
	if c.cfg.StallTimeout > 0 {
		stall = time.AfterFunc(c.cfg.StallTimeout, func() { cancel(errStalled) })
		defer stall.Stop()
	}
	hdr := http.Header{}
	if have > 0 {
		hdr.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.send(ctx, attemptCtx, c.http, http.MethodGet, u, hdr)
	if err != nil {
		return false, err
	}
	defer closeBody(resp)

	var total int64
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			if _, err := restart(f); err != nil {
				return false, err
			}
			return false, &transientError{fmt.Errorf("GET %s: asked for bytes from %d, got Content-Range %q; restarting",
				u, have, resp.Header.Get("Content-Range"))}
		}
		total = size
	case http.StatusOK: // full body: the server ignored Range, or we sent none
		if have, err = restart(f); err != nil {
			return false, err
		}
		total = resp.ContentLength
	case http.StatusRequestedRangeNotSatisfiable:
		if _, err := restart(f); err != nil {
			return false, err
		}
		return false, &transientError{fmt.Errorf("GET %s: range from %d not satisfiable; restarting", u, have)}
	default:
		return false, c.statusError(resp, repo, file)
	}
	if err := meta.learn(total, resp); err != nil {
		return false, fmt.Errorf("GET %s: %w", u, err)
	}

	body := io.Reader(resp.Body)
	if meta.size >= 0 {
		body = io.LimitReader(body, meta.size-have+1) // verify catches the extra byte
	}
	r := &stallReader{r: body, timer: stall, d: c.cfg.StallTimeout}
	w := &progressWriter{w: f, file: file, done: have, total: meta.size, fn: c.cfg.Progress}
	c.progress(file, have, meta.size)
	n, err := io.CopyBuffer(w, r, make([]byte, 256<<10))
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return n > 0, transient(ctx, attemptCtx, fmt.Errorf("GET %s: after %d bytes: %w", u, have+n, re.err))
		}
		return n > 0, fmt.Errorf("download %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		return n > 0, fmt.Errorf("download %s: %w", file, err)
	}
	return n > 0, nil
}

// learn fills in what HEAD did not say from the GET, and rejects a GET that
// contradicts it.
func (m *fileMeta) learn(total int64, resp *http.Response) error {
	if total >= 0 && m.size >= 0 && total != m.size {
		return fmt.Errorf("%w: file is %d bytes, but the hub announced %d", ErrChecksum, total, m.size)
	}
	if m.size < 0 {
		m.size = total
	}
	if m.sha256 == "" {
		// X-Linked-Etag may sit on the hub's redirect, earlier in the chain.
		for r := resp; r != nil; r = r.Request.Response {
			if g := metaFromHeaders(r.Header, false); g.sha256 != "" {
				m.sha256 = g.sha256
				break
			}
		}
	}
	return nil
}

func restart(f *os.File) (int64, error) {
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("download: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("download: %w", err)
	}
	return 0, nil
}

// parseContentRange parses "bytes start-end/size" (size may be "*").
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	span, sz, found := strings.Cut(rest, "/")
	first, _, found2 := strings.Cut(span, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil || size < 0 {
			return 0, 0, false
		}
	}
	return start, size, true
}

// complete reports whether dst already holds the announced file; any
// doubt (missing, unreadable, different) means download it again.
func complete(dst string, m fileMeta) bool {
	st, err := os.Stat(dst)
	if err != nil || !st.Mode().IsRegular() || m.size >= 0 && st.Size() != m.size {
		return false
	}
	return verify(dst, m) == nil
}

// verify checks a file's size and, when known, its sha256.
func verify(p string, m fileMeta) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	if m.sha256 == "" {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if m.size >= 0 && st.Size() != m.size {
			return fmt.Errorf("%w: got %d bytes, want %d", ErrChecksum, st.Size(), m.size)
		}
		return nil
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if m.size >= 0 && n != m.size {
		return fmt.Errorf("%w: got %d bytes, want %d", ErrChecksum, n, m.size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.sha256 {
		return fmt.Errorf("%w: sha256 %s, want %s", ErrChecksum, got, m.sha256)
	}
	return nil
}

func (c *Client) progress(file string, done, total int64) {
	if c.cfg.Progress != nil {
		c.cfg.Progress(file, done, total)
	}
}

// readError tags body read failures, which are retried, apart from
// local write failures (a full disk), which are not.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// stallReader pushes the stall deadline back whenever bytes arrive.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 && s.timer != nil {
		s.timer.Reset(s.d)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = &readError{err}
	}
	return n, err
}

type progressWriter struct {
	w           io.Writer
	file        string
	done, total int64
	fn          func(string, int64, int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.fn != nil && n > 0 {
		p.fn(p.file, p.done, p.total)
	}
	return n, err
}

// fileSizeLimit bounds a downloaded file by its kind (-1: weights, no
// bound): a config or tokenizer file of gigabytes is no model's.
func fileSizeLimit(file string) int64 {
	switch base := path.Base(file); {
	case strings.HasSuffix(base, ".safetensors"):
		return -1
	case base == "tokenizer.json":
		return 256 << 20
	default:
		return 16 << 20
	}
}
