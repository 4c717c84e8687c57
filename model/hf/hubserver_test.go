package hf

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub imitates huggingface.co: the model-info API, resolve URLs that
// serve git files directly and redirect LFS files (*.safetensors) to a CDN
// on another host with X-Linked-Size / X-Linked-Etag, and hub error codes.
// Faults are injected per file.
type fakeHub struct {
	repo, sha string
	files     map[string][]byte
	token     string // required when set
	gated     bool   // 403 for everyone

	ignoreRange bool            // the CDN answers 200 to range requests
	cut         map[string]int  // GETs of a file that send half, then drop the connection
	stall       map[string]int  // GETs of a file that send half, then hang
	fail        map[string]int  // GETs of a file answered 503
	badHash     map[string]bool // announce a wrong sha256

	hub, cdn *httptest.Server

	mu     sync.Mutex
	gets   map[string]int      // CDN and direct GETs per file
	heads  int                 // HEAD requests reaching the CDN (should be none)
	ranges map[string][]string // Range headers per file
	auth   []string            // Authorization headers the hub saw
}

func newFakeHub(t *testing.T, repo string, files map[string][]byte) *fakeHub {
	h := &fakeHub{
		repo: repo, sha: strings.Repeat("ab12", 10), files: files,
		cut: map[string]int{}, stall: map[string]int{}, fail: map[string]int{}, badHash: map[string]bool{},
		gets: map[string]int{}, ranges: map[string][]string{},
	}
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	t.Cleanup(h.hub.Close)
	t.Cleanup(h.cdn.Close)
	return h
}

// checkpointFiles reads a folder written by WriteCheckpoint, adding the
// tokenizer files and some a download must skip.
func checkpointFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{
		"tokenizer.json":         []byte(`{"model":{"type":"BPE"}}`),
		"tokenizer_config.json":  []byte(`{"eos_token":"<|im_end|>"}`),
		"README.md":              []byte("# tiny"),
		"pytorch_model.bin":      []byte("not wanted"),
		"onnx/model.safetensors": []byte("not wanted either"),
		"notes.txt":              []byte("wanted only with a pattern"),
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

func (h *fakeHub) hubError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", code)
	http.Error(w, fmt.Sprintf(`{"error":%q}`, code), status)
}

// access applies the hub's rules: 401 without a valid token on a private
// repo, 403 on a gated one, 404 for an unknown repo.
func (h *fakeHub) access(w http.ResponseWriter, r *http.Request, repo string) bool {
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	h.mu.Unlock()
	switch {
	case h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token:
		h.hubError(w, http.StatusUnauthorized, "RepoNotFound")
	case h.gated:
		h.hubError(w, http.StatusForbidden, "GatedRepo")
	case repo != h.repo:
		h.hubError(w, http.StatusNotFound, "RepoNotFound")
	default:
		return true
	}
	return false
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 6)
	if len(parts) == 6 && parts[0] == "api" && parts[1] == "models" && parts[4] == "revision" {
		h.serveInfo(w, r, parts[2]+"/"+parts[3], parts[5])
		return
	}
	parts = strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) == 5 && parts[2] == "resolve" {
		h.serveResolve(w, r, parts[0]+"/"+parts[1], parts[3], parts[4])
		return
	}
	http.NotFound(w, r)
}

func (h *fakeHub) serveInfo(w http.ResponseWriter, r *http.Request, repo, rev string) {
	if !h.access(w, r, repo) {
		return
	}
	if rev != "main" && rev != h.sha {
		h.hubError(w, http.StatusNotFound, "RevisionNotFound")
		return
	}
	info := map[string]any{"id": h.repo, "sha": h.sha}
	var siblings []map[string]string
	for name := range h.files {
		siblings = append(siblings, map[string]string{"rfilename": name})
	}
	info["siblings"] = siblings
	json.NewEncoder(w).Encode(info)
}

func (h *fakeHub) serveResolve(w http.ResponseWriter, r *http.Request, repo, rev, file string) {
	if !h.access(w, r, repo) {
		return
	}
	data, ok := h.files[file]
	switch {
	case rev != h.sha: // the client must pin files to the commit
		h.hubError(w, http.StatusNotFound, "RevisionNotFound")
		return
	case !ok:
		h.hubError(w, http.StatusNotFound, "EntryNotFound")
		return
	}
	sum := sha256.Sum256(data)
	if strings.HasSuffix(file, ".safetensors") { // an LFS file
		etag := hex.EncodeToString(sum[:])
		if h.badHash[file] {
			etag = strings.Repeat("0", 64)
		}
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
		w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
		w.Header().Set("ETag", `"`+etag+`"`)
		http.Redirect(w, r, h.cdn.URL+"/cdn/"+file, http.StatusFound)
		return
	}
	git := sha1.Sum(fmt.Appendf(nil, "blob %d\x00%s", len(data), data))
	w.Header().Set("ETag", `"`+hex.EncodeToString(git[:])+`"`)
	h.serveBytes(w, r, file, data)
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	file := strings.TrimPrefix(r.URL.Path, "/cdn/")
	data, ok := h.files[file]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.serveBytes(w, r, file, data)
}

// serveBytes answers GET and HEAD, honouring "Range: bytes=N-" unless
// ignoreRange, and applies the file's injected faults.
func (h *fakeHub) serveBytes(w http.ResponseWriter, r *http.Request, file string, data []byte) {
	h.mu.Lock()
	if r.Method == http.MethodHead {
		if r.Host == strings.TrimPrefix(h.cdn.URL, "http://") {
			h.heads++
		}
		h.mu.Unlock()
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		return
	}
	h.gets[file]++
	h.ranges[file] = append(h.ranges[file], r.Header.Get("Range"))
	fail, cut, stall := h.fail[file] > 0, h.cut[file] > 0, h.stall[file] > 0
	switch {
	case fail:
		h.fail[file]--
	case cut:
		h.cut[file]--
	case stall:
		h.stall[file]--
	}
	h.mu.Unlock()
	if fail {
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	status, start := http.StatusOK, 0
	if rg := r.Header.Get("Range"); rg != "" && !h.ignoreRange {
		if _, err := fmt.Sscanf(rg, "bytes=%d-", &start); err != nil || start >= len(data) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		status = http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
	}
	body := data[start:]
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if !cut && !stall {
		w.Write(body)
		return
	}
	w.Write(body[:len(body)/2])
	w.(http.Flusher).Flush()
	if stall {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	panic(http.ErrAbortHandler) // drop the connection mid-body
}

func (h *fakeHub) counts(file string) (gets int, ranges []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gets[file], append([]string(nil), h.ranges[file]...)
}
