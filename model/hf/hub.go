package hf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Client downloads model repos from a Hugging Face hub. It is safe for
// concurrent use, but two downloads of the same repo into the same
// CacheDir at once are not coordinated.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	// head does not follow redirects to other hosts: the hub's redirect
	// carries the LFS size and sha256, and CDN URLs are signed for GET.
	head *http.Client
	// user is the endpoint's user info, sent as Basic auth to authHost.
	user     *url.Userinfo
	authHost string
}

// NewClient validates cfg and returns a client.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hub config: %w", err)
	}
	hc := cfg.httpClient()
	head := *hc
	head.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	c := &Client{cfg: cfg, http: hc, head: &head}
	// Credentials in the endpoint (http://user:password@mirror) are sent
	// as Basic auth to the endpoint's host only, and never appear in a
	// URL this client prints.
	u, err := url.Parse(strings.TrimRight(cfg.Endpoint, "/"))
	if err != nil {
		return nil, fmt.Errorf("hub config: %w", err)
	}
	if u.User != nil {
		c.user, c.authHost = u.User, u.Host
		u.User = nil
	}
	c.endpoint = u.String()
	return c, nil
}

// RedactEndpoint is endpoint with any password replaced by "xxxxx", for
// messages.
func RedactEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(unparsable endpoint)"
	}
	return u.Redacted()
}

// RepoInfo is the part of the hub's model info that downloads need.
type RepoInfo struct {
	ID string `json:"id"`
	// SHA is the commit the requested revision resolved to.
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
	} `json:"siblings"`
}

// Files returns the repo's file paths.
func (r *RepoInfo) Files() []string {
	files := make([]string, len(r.Siblings))
	for i, s := range r.Siblings {
		files[i] = s.RFilename
	}
	return files
}

// repoPattern follows the hub's rules: [owner/]name of letters, digits and
// "-_.", no "--" or "..", at most 96 characters.
var repoPattern = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*/)?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidateRepoID checks a repo id such as "Qwen/Qwen3-Reranker-0.6B".
func ValidateRepoID(repo string) error {
	if len(repo) > 96 || !repoPattern.MatchString(repo) || strings.Contains(repo, "--") || strings.Contains(repo, "..") {
		return fmt.Errorf("invalid repo id %q: want owner/name (letters, digits, '-', '_', '.'; no '--' or '..')", repo)
	}
	return nil
}

// Info lists the files of repo at the configured revision.
func (c *Client) Info(ctx context.Context, repo string) (*RepoInfo, error) {
	if err := ValidateRepoID(repo); err != nil {
		return nil, err
	}
	u := c.endpoint + "/api/models/" + repo + "/revision/" + url.PathEscape(c.cfg.Revision)
	var info RepoInfo
	err := c.retry(ctx, "GET "+u, func() (bool, error) {
		// The same stall timeout as file bodies: a reply that stops
		// sending is cut and retried, not waited on forever.
		attemptCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var stall *time.Timer
		if c.cfg.StallTimeout > 0 {
			stall = time.AfterFunc(c.cfg.StallTimeout, func() { cancel(errStalled) })
			defer stall.Stop()
		}
		resp, err := c.send(ctx, attemptCtx, c.http, http.MethodGet, u, nil)
		if err != nil {
			return false, err
		}
		defer closeBody(resp)
		if resp.StatusCode != http.StatusOK {
			return false, c.statusError(resp, repo, "")
		}
		body, err := io.ReadAll(io.LimitReader(&stallReader{r: resp.Body, timer: stall, d: c.cfg.StallTimeout}, 64<<20))
		if err != nil {
			return false, transient(ctx, attemptCtx, err)
		}
		if err := json.Unmarshal(body, &info); err != nil {
			return false, fmt.Errorf("GET %s: bad model info: %w", u, err)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// Download fetches the files needed to load repo (config.json, *.safetensors,
// the shard index, tokenizer.json, tokenizer_config.json, the
// sentence-transformers modules.json, config_sentence_transformers.json,
// sentence_bert_config.json, 1_Pooling/config.json and a LogitScore module's config.json, and
// rerankd_template.json, when present, plus Config.Patterns) into CacheDir and returns the folder, ready for
// LoadCheckpoint. Files already there and matching the hub's size and
// sha256 are kept; interrupted downloads resume.
func (c *Client) Download(ctx context.Context, repo string) (string, error) {
	info, err := c.Info(ctx, repo)
	if err != nil {
		return "", err
	}
	files, err := c.selectFiles(repo, info)
	if err != nil {
		return "", err
	}
	rev := c.cfg.Revision
	if commitPattern.MatchString(info.SHA) {
		rev = info.SHA // pin every file to one commit
	}
	dir := filepath.Join(c.cfg.CacheDir, strings.ReplaceAll(repo, "/", "--"), url.PathEscape(rev))
	for _, f := range files {
		if err := c.downloadFile(ctx, repo, rev, f, dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

var commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// defaultFiles are what LoadCheckpoint and the tokenizer read, and the
// sentence-transformers files that tell an embedding checkpoint's pooling,
// normalisation and prompts, or a CrossEncoder's score tokens
// (folder.Convert's --kind auto and folder.LoadTemplate read them).
var defaultFiles = []string{ConfigFile, WeightsIndex, "tokenizer.json", "tokenizer_config.json", "*.safetensors",
	"modules.json", "config_sentence_transformers.json", "1_Pooling/config.json",
	// The Transformer module's max_seq_length (an encoder embedding
	// model's input limit: folder.ReadInputLimit).
	"sentence_bert_config.json",
	// A reranker's prompt template: rerankd's own file, and a causal-LM
	// CrossEncoder's score module config (its answer token ids).
	"rerankd_template.json", "*_LogitScore/config.json", "*_CausalScoreHead/config.json"}

// Wanted reports whether Download fetches the repo file name.
func (c *Client) Wanted(name string) bool {
	for _, p := range slices.Concat(defaultFiles, c.cfg.Patterns) {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (c *Client) selectFiles(repo string, info *RepoInfo) ([]string, error) {
	var files []string
	hasConfig, hasWeights := false, false
	for _, name := range info.Files() {
		if !c.Wanted(name) {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) || strings.ContainsAny(name, "\\\x00") {
			return nil, fmt.Errorf("repo %s lists unsafe file name %q", repo, name)
		}
		hasConfig = hasConfig || name == ConfigFile
		hasWeights = hasWeights || path.Ext(name) == ".safetensors" && !strings.Contains(name, "/")
		files = append(files, name)
	}
	if !hasConfig || !hasWeights {
		return nil, fmt.Errorf("repo %s at %s has no %s or no *.safetensors weights (files: %s)",
			repo, c.cfg.Revision, ConfigFile, strings.Join(info.Files(), ", "))
	}
	slices.Sort(files)
	return files, nil
}

// send issues one request with the hub headers. attemptCtx may be a child
// of ctx that a stall timer cancels.
func (c *Client) send(ctx, attemptCtx context.Context, hc *http.Client, method, u string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(attemptCtx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	} else if c.user != nil && req.URL.Host == c.authHost {
		pw, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), pw)
	}
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	// Sizes must be the stored bytes, not a compressed transfer.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, transient(ctx, attemptCtx, fmt.Errorf("%s %s: %w", method, u, err))
	}
	return resp, nil
}

// closeBody closes a response body; after reading, its error says nothing.
func closeBody(resp *http.Response) { _ = resp.Body.Close() }

// ensureDir creates the parent folder of path.
func ensureDir(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return nil
}
