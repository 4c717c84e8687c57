package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/remote"
)

// servedOptions are the flags of the served stages: a rerank API
// (--rerank-url) and an OpenAI embeddings API (--embed-url) in place of
// model folders.
type servedOptions struct {
	rerankURL, rerankAPI, rerankModel, rerankKeyEnv string
	embedURL, embedModel, embedKeyEnv, queryPrefix  string
	maxDocs, maxInputs                              int
	cache                                           string
	noCache                                         bool
	transport                                       remote.Transport
}

// Environment variables holding the API keys, unless flags name others.
const (
	defaultRerankKeyEnv = "RERANK_API_KEY"
	defaultEmbedKeyEnv  = "EMBED_API_KEY"
)

// servedFlags registers the served stages' flags on fs.
func servedFlags(fs *flag.FlagSet) *servedOptions {
	o := &servedOptions{transport: remote.DefaultTransport()}
	apis := make([]string, 0, 3)
	for _, a := range remote.APIs() {
		apis = append(apis, string(a))
	}
	fs.StringVar(&o.rerankURL, "rerank-url", "", "score the rerank stage through this served rerank API instead of --model (a URL without a path gets the API's usual one)")
	fs.StringVar(&o.rerankAPI, "rerank-api", string(remote.Cohere), "--rerank-url's API: "+strings.Join(apis, ", ")+" (rerankd serves cohere and tei)")
	fs.StringVar(&o.rerankModel, "rerank-served-model", "", "model name sent to --rerank-url (\"\": none)")
	fs.StringVar(&o.rerankKeyEnv, "rerank-key-env", defaultRerankKeyEnv, "environment variable holding --rerank-url's API key (sent as a Bearer token when set)")
	fs.IntVar(&o.maxDocs, "max-docs", 0, "documents per rerank request (0: the API's default, 32 for tei, 1000 otherwise; a server refusing a request for its size lowers it)")
	fs.StringVar(&o.embedURL, "embed-url", "", "embed through this OpenAI embeddings API (POST /v1/embeddings) instead of --embed-model")
	fs.StringVar(&o.embedModel, "embed-served-model", "", "model name sent to --embed-url (\"\": none)")
	fs.StringVar(&o.embedKeyEnv, "embed-key-env", defaultEmbedKeyEnv, "environment variable holding --embed-url's API key")
	fs.StringVar(&o.queryPrefix, "embed-query-prefix", "", "text put before every question sent to --embed-url (an asymmetric model's query instruction)")
	fs.IntVar(&o.maxInputs, "max-inputs", 64, "texts per embedding request")
	fs.IntVar(&o.transport.Concurrency, "concurrency", o.transport.Concurrency, "served stages: requests in flight, and questions searched at once")
	fs.DurationVar(&o.transport.Timeout, "request-timeout", o.transport.Timeout, "served stages: one attempt's time limit (a timed-out attempt is retried)")
	fs.IntVar(&o.transport.Retries, "retries", o.transport.Retries, "served stages: retries of a failed attempt (429 after Retry-After, 5xx, timeouts)")
	fs.StringVar(&o.cache, "cache", "", "served stages: score cache file (default: eval/served.cache in rerankd's cache folder); a rerun or resumed run sends only what it lacks")
	fs.BoolVar(&o.noCache, "no-cache", false, "served stages: no score cache")
	return o
}

// validate reports every problem with the served flags at once.
func (o *servedOptions) validate() error {
	var errs []error
	if o.rerankURL != "" {
		cfg := o.rerankerConfig()
		errs = append(errs, flagNamed(cfg.Validate(), map[string]string{"url": "--rerank-url", "api": "--rerank-api",
			"max_docs": "--max-docs", "concurrency": "--concurrency", "timeout": "--request-timeout", "retries": "--retries"}))
	}
	if o.embedURL != "" {
		cfg := o.embedderConfig()
		errs = append(errs, flagNamed(cfg.Validate(), map[string]string{"url": "--embed-url", "max_inputs": "--max-inputs",
			"concurrency": "--concurrency", "timeout": "--request-timeout", "retries": "--retries"}))
	}
	return errors.Join(errs...)
}

func (o *servedOptions) rerankerConfig() remote.RerankerConfig {
	c := remote.RerankerConfig{Transport: o.transport, API: remote.API(strings.ToLower(o.rerankAPI)), Model: o.rerankModel, MaxDocs: o.maxDocs}
	c.URL = o.rerankURL
	c.Key, _ = paths.LookupEnv(o.rerankKeyEnv)
	return c
}

func (o *servedOptions) embedderConfig() remote.EmbedderConfig {
	c := remote.EmbedderConfig{Transport: o.transport, Model: o.embedModel, QueryPrefix: o.queryPrefix, MaxInputs: o.maxInputs}
	c.URL = o.embedURL
	c.Key, _ = paths.LookupEnv(o.embedKeyEnv)
	return c
}

// openCache opens the score cache (nil with --no-cache).
func (o *servedOptions) openCache() (*remote.Cache, error) {
	if o.noCache {
		return nil, nil
	}
	path := o.cache
	if path == "" {
		path = filepath.Join(paths.CacheDir(), "eval", "served.cache")
	}
	return remote.OpenCache(path)
}

func (o *servedOptions) openReranker(c *remote.Cache) (*remote.Reranker, *stageInfo, error) {
	cfg := o.rerankerConfig()
	cfg.Cache = c
	r, err := remote.NewReranker(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("--rerank-url: %w", err)
	}
	return r, &stageInfo{URL: r.Endpoint(), API: string(cfg.API), ServedModel: cfg.Model}, nil
}

func (o *servedOptions) openEmbedder(c *remote.Cache) (*remote.Embedder, *stageInfo, error) {
	cfg := o.embedderConfig()
	cfg.Cache = c
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.Retries+1)*(cfg.Timeout+cfg.MaxBackoff))
	defer cancel()
	e, err := remote.NewEmbedder(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("--embed-url: %w", err)
	}
	return e, &stageInfo{URL: e.Endpoint(), API: "openai", ServedModel: cfg.Model, QueryPrefix: cfg.QueryPrefix, Dim: e.Dim()}, nil
}

// stageInfo names a pipeline's reranker or embedder in a run's sidecar:
// a model folder and its content hash, or a served API.
type stageInfo struct {
	Folder string `json:"folder,omitempty"`
	// SHA256 is the folder's content hash (folderHash).
	SHA256      string `json:"sha256,omitempty"`
	URL         string `json:"url,omitempty"`
	API         string `json:"api,omitempty"`
	ServedModel string `json:"served_model,omitempty"`
	QueryPrefix string `json:"query_prefix,omitempty"`
	Dim         int    `json:"dim,omitempty"`
	// RandomWeights: the folder carries the test-model generator's
	// random-weights marker (folder.RandomWeights): the run measures
	// nothing about quality.
	RandomWeights bool `json:"random_weights,omitempty"`
}

// String is the one-line form the summary prints.
func (s *stageInfo) String() string {
	if s == nil {
		return "none"
	}
	if s.URL != "" {
		out := s.API + " " + s.URL
		if s.ServedModel != "" {
			out += " model " + s.ServedModel
		}
		return out
	}
	out := fmt.Sprintf("%s (sha256 %.12s)", s.Folder, s.SHA256)
	if s.RandomWeights {
		out += " [RANDOM WEIGHTS]"
	}
	return out
}

func folderInfo(dir string) (*stageInfo, error) {
	h, err := folderHash(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	random, err := folder.RandomWeights(dir)
	if err != nil {
		return nil, err
	}
	return &stageInfo{Folder: abs, SHA256: h, RandomWeights: random}, nil
}

// folderHash is the SHA-256 of a folder's regular files: each file's
// slash-separated relative path, a NUL, its size and its content, in path
// order. Two folders with the same files have the same hash wherever they
// are.
func folderHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", dir, err)
	}
	slices.Sort(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		if err := hashFile(h, filepath.ToSlash(rel), p); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\x00%d\x00", name, st.Size())
	_, err = io.Copy(w, f)
	return err
}
