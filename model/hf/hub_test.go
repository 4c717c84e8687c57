package hf

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/model/arch"
)

const testRepo = "acme/tiny-reranker"

// testClient returns a client for h with fast retries, recording progress.
func testClient(t *testing.T, h *fakeHub, edit func(*Config)) (*Client, *progressLog) {
	t.Helper()
	p := &progressLog{last: map[string][2]int64{}}
	cfg := DefaultConfig()
	cfg.Endpoint = h.hub.URL + "/"
	cfg.CacheDir = t.TempDir()
	cfg.RetryBackoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	cfg.Progress = p.record
	if edit != nil {
		edit(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

type progressLog struct {
	mu   sync.Mutex
	last map[string][2]int64
}

func (p *progressLog) record(file string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[file] = [2]int64{done, total}
}

// servedCheckpoint writes w and serves it, with tokenizer and unwanted files.
func servedCheckpoint(t *testing.T, w *arch.Weights, dtype string, shards int) *fakeHub {
	t.Helper()
	src := t.TempDir()
	if err := WriteCheckpoint(src, w, dtype, shards); err != nil {
		t.Fatal(err)
	}
	return newFakeHub(t, testRepo, checkpointFiles(t, src))
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestDownload(t *testing.T) {
	tests := []struct {
		name     string
		tied     bool
		dtype    string
		shards   int
		rel      float64
		token    string
		patterns []string
		extra    []string // more files the repo holds
		want     []string
	}{
		{"tied bf16 single", true, "BF16", 1, 1.0 / 256, "", nil, nil,
			[]string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}},
		{"untied f32 sharded, private", false, "F32", 3, 0, "hf_secret", []string{"*.txt"}, nil,
			[]string{"config.json", "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
				"model-00003-of-00003.safetensors", "model.safetensors.index.json", "notes.txt",
				"tokenizer.json", "tokenizer_config.json"}},
		// An embedding release: its sentence-transformers files come along
		// (Convert's --kind auto reads them); other modules' do not.
		{"sentence-transformers files", true, "BF16", 1, 1.0 / 256, "", nil,
			[]string{"modules.json", "config_sentence_transformers.json", "1_Pooling/config.json", "2_Dense/config.json", "README.md"},
			[]string{"1_Pooling/config.json", "config.json", "config_sentence_transformers.json", "model.safetensors",
				"modules.json", "tokenizer.json", "tokenizer_config.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := randomWeights(t, tt.tied, 11)
			src := t.TempDir()
			if err := WriteCheckpoint(src, w, tt.dtype, tt.shards); err != nil {
				t.Fatal(err)
			}
			files := checkpointFiles(t, src)
			for _, name := range tt.extra {
				files[name] = []byte(`{"file": "` + name + `"}`)
			}
			h := newFakeHub(t, testRepo, files)
			h.token = tt.token
			c, prog := testClient(t, h, func(c *Config) { c.Token, c.Patterns = tt.token, tt.patterns })
			dir, err := c.Download(context.Background(), testRepo)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(c.cfg.CacheDir, "acme--tiny-reranker", h.sha); dir != want {
				t.Errorf("dir %s, want %s", dir, want)
			}
			if got := listDir(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("downloaded %v\nwant %v", got, tt.want)
			}
			for _, name := range tt.want {
				got, _ := os.ReadFile(filepath.Join(dir, name))
				if !bytes.Equal(got, h.files[name]) {
					t.Errorf("%s differs from the served file", name)
				}
				if p := prog.last[name]; p[0] != int64(len(h.files[name])) || p[1] != p[0] {
					t.Errorf("last progress of %s = %v, want done == total == %d", name, p, len(h.files[name]))
				}
			}
			if h.heads != 0 {
				t.Errorf("%d HEAD requests followed the redirect to the CDN", h.heads)
			}
			if tt.token != "" && !slices.Contains(h.auth, "Bearer "+tt.token) {
				t.Errorf("token not sent: %q", h.auth)
			}
			loaded, err := LoadCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			assertWeights(t, loaded, w, tt.rel)
		})
	}
}

// TestDownloadInterrupted: transfers cut or stalled halfway resume with a
// Range request, or restart when the server ignores Range.
func TestDownloadInterrupted(t *testing.T) {
	const file = "model.safetensors"
	tests := []struct {
		name        string
		ignoreRange bool
		stall       bool
		wantRange   bool // the second GET resumes rather than restarts
	}{
		{"cut, resumed", false, false, true},
		{"cut, server ignores Range", true, false, false},
		{"stalled, resumed", false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := randomWeights(t, true, 5)
			h := servedCheckpoint(t, w, "F32", 1)
			h.ignoreRange = tt.ignoreRange
			if tt.stall {
				h.stall[file] = 1
			} else {
				h.cut[file] = 1
			}
			c, _ := testClient(t, h, func(c *Config) { c.StallTimeout = 200 * time.Millisecond })
			dir, err := c.Download(context.Background(), testRepo)
			if err != nil {
				t.Fatal(err)
			}
			gets, ranges := h.counts(file)
			if gets != 2 || ranges[0] != "" {
				t.Fatalf("%d GETs with ranges %q, want a plain GET then a retry", gets, ranges)
			}
			half := len(h.files[file]) / 2
			if want := "bytes=" + strconv.Itoa(half) + "-"; ranges[1] != want {
				t.Errorf("retry sent Range %q, want %q", ranges[1], want)
			}
			got, _ := os.ReadFile(filepath.Join(dir, file))
			if !bytes.Equal(got, h.files[file]) {
				t.Fatal("downloaded file differs")
			}
			if _, err := os.Stat(filepath.Join(dir, file+".incomplete")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf(".incomplete left behind: %v", err)
			}
		})
	}
}

// TestDownloadLeftover: an .incomplete file from an earlier run is resumed;
// one longer than the file is discarded.
func TestDownloadLeftover(t *testing.T) {
	const file = "model.safetensors"
	tests := []struct {
		name      string
		leftover  func(data []byte) []byte
		wantRange string
	}{
		{"prefix resumes", func(d []byte) []byte { return d[:1000] }, "bytes=1000-"},
		{"too long restarts", func(d []byte) []byte { return append(slices.Clone(d), 1, 2, 3) }, ""},
		{"complete needs no GET", func(d []byte) []byte { return d }, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := servedCheckpoint(t, randomWeights(t, true, 5), "F32", 1)
			c, _ := testClient(t, h, nil)
			dir := filepath.Join(c.cfg.CacheDir, "acme--tiny-reranker", h.sha)
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, file+".incomplete"), tt.leftover(h.files[file]), 0o644)
			if _, err := c.Download(context.Background(), testRepo); err != nil {
				t.Fatal(err)
			}
			_, ranges := h.counts(file)
			if got := append(ranges, "none")[0]; got != tt.wantRange {
				t.Errorf("first GET Range %q, want %q", got, tt.wantRange)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, file)); !bytes.Equal(got, h.files[file]) {
				t.Error("downloaded file differs")
			}
		})
	}
}

func TestDownloadChecksumMismatch(t *testing.T) {
	h := servedCheckpoint(t, randomWeights(t, true, 5), "F32", 1)
	h.badHash["model.safetensors"] = true
	c, _ := testClient(t, h, nil)
	_, err := c.Download(context.Background(), testRepo)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "model.safetensors") {
		t.Fatalf("err = %v, want a checksum error naming the file", err)
	}
	dir := filepath.Join(c.cfg.CacheDir, "acme--tiny-reranker", h.sha)
	for _, name := range []string{"model.safetensors", "model.safetensors.incomplete"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a checksum mismatch", name)
		}
	}
}

// TestDownloadSkipsComplete: a second download only asks for metadata,
// unless a local file no longer matches.
func TestDownloadSkipsComplete(t *testing.T) {
	const file = "model.safetensors"
	h := servedCheckpoint(t, randomWeights(t, true, 5), "BF16", 1)
	c, _ := testClient(t, h, nil)
	dir, err := c.Download(context.Background(), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Download(context.Background(), testRepo); err != nil {
		t.Fatal(err)
	}
	if gets, _ := h.counts(file); gets != 1 {
		t.Errorf("%d GETs of %s over two downloads, want 1", gets, file)
	}
	// Same size, different bytes: the sha256 check catches it.
	data, _ := os.ReadFile(filepath.Join(dir, file))
	data[len(data)-1] ^= 0xff
	os.WriteFile(filepath.Join(dir, file), data, 0o644)
	if _, err := c.Download(context.Background(), testRepo); err != nil {
		t.Fatal(err)
	}
	if gets, _ := h.counts(file); gets != 2 {
		t.Errorf("corrupted file not fetched again (%d GETs)", gets)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, file)); !bytes.Equal(got, h.files[file]) {
		t.Error("corrupted file not repaired")
	}
}

func TestDownloadRetries(t *testing.T) {
	tests := []struct {
		name    string
		fails   int
		retries int
		wantErr string
	}{
		{"recovers", 2, 3, ""},
		{"gives up", 3, 2, "giving up after 3 attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := servedCheckpoint(t, randomWeights(t, true, 5), "F32", 1)
			h.fail["model.safetensors"] = tt.fails
			c, _ := testClient(t, h, func(c *Config) { c.MaxRetries = tt.retries })
			_, err := c.Download(context.Background(), testRepo)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "503")) {
				t.Fatalf("err = %v, want %q and the 503", err, tt.wantErr)
			}
		})
	}
}

func TestDownloadErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(h *fakeHub, c *Config)
		repo   string
		target error
		want   string
	}{
		{"unknown repo", nil, "acme/nope", ErrNotFound, "acme/nope not found (if it is private or gated, set a token)"},
		{"private, no token", func(h *fakeHub, c *Config) { h.token = "right" }, testRepo, ErrAccess,
			"repo acme/tiny-reranker not found or gated: set a token"},
		{"private, wrong token", func(h *fakeHub, c *Config) { h.token, c.Token = "right", "wrong" }, testRepo, ErrAccess, "token rejected"},
		{"gated", func(h *fakeHub, c *Config) { h.gated, c.Token = true, "t" }, testRepo, ErrAccess, "accept its terms"},
		{"bad revision", func(h *fakeHub, c *Config) { c.Revision = "v9" }, testRepo, ErrNotFound, "revision not found"},
		{"no weights", func(h *fakeHub, c *Config) { delete(h.files, "model.safetensors") }, testRepo, nil, "no *.safetensors weights"},
		{"bad repo id", nil, "../etc", nil, "invalid repo id"},
		{"unsafe file name", func(h *fakeHub, c *Config) {
			h.files["../evil.safetensors"] = []byte("x")
			c.Patterns = []string{"../*"}
		}, testRepo, nil, "unsafe file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := servedCheckpoint(t, randomWeights(t, true, 5), "F32", 1)
			c, _ := testClient(t, h, func(c *Config) {
				if tt.setup != nil {
					tt.setup(h, c)
				}
			})
			_, err := c.Download(context.Background(), tt.repo)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.target != nil && !errors.Is(err, tt.target) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.target)
			}
		})
	}
}

func TestDownloadCancel(t *testing.T) {
	h := servedCheckpoint(t, randomWeights(t, true, 5), "F32", 1)
	h.stall["model.safetensors"] = 1
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := testClient(t, h, func(c *Config) {
		c.Progress = func(file string, done, total int64) {
			if file == "model.safetensors" && done > 0 {
				cancel() // once the stalled transfer has started
			}
		}
	})
	start := time.Now()
	_, err := c.Download(ctx, testRepo)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if gets, _ := h.counts("model.safetensors"); gets != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("%d GETs in %v after cancel, want 1 and no waiting", gets, time.Since(start))
	}
}
