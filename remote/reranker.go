package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rerankd/rerankd/rerank"
)

// API is a rerank API's request and answer shape.
type API string

// The rerank APIs spoken.
const (
	// Cohere: POST /v1/rerank {"model","query","documents":[...]} →
	// {"results":[{"index","relevance_score"}]}. rerankd serves it.
	Cohere API = "cohere"
	// Jina: Cohere's shape, Jina's defaults.
	Jina API = "jina"
	// TEI is text-embeddings-inference: POST /rerank {"query","texts"} →
	// [{"index","score"}]. rerankd serves it.
	TEI API = "tei"
)

// APIs lists the rerank APIs, for help texts.
func APIs() []API { return []API{Cohere, TEI, Jina} }

// path is the API's usual endpoint path.
func (a API) path() string {
	if a == TEI {
		return "/rerank"
	}
	return "/v1/rerank"
}

// defaultMaxDocs is the documents one request may carry unless the
// configuration says: TEI's default max_client_batch_size, and Cohere's
// recommended maximum.
func (a API) defaultMaxDocs() int {
	if a == TEI {
		return 32
	}
	return 1000
}

// RerankerConfig configures a Reranker.
type RerankerConfig struct {
	Transport
	// API is the request shape.
	API API
	// Model is the model name sent ("": none; a server with one model
	// needs none).
	Model string
	// MaxDocs bounds the documents of one request (0: the API's default,
	// 32 for TEI, 1000 otherwise).
	MaxDocs int
}

// DefaultRerankerConfig returns the defaults for url and api.
func DefaultRerankerConfig(url string, api API) RerankerConfig {
	t := DefaultTransport()
	t.URL = url
	return RerankerConfig{Transport: t, API: api}
}

// Validate reports every problem at once.
func (c RerankerConfig) Validate() error {
	errs := flatten(c.Transport.Validate())
	switch c.API {
	case Cohere, Jina, TEI:
	default:
		errs = append(errs, fmt.Errorf("api %q: want cohere, tei or jina", c.API))
	}
	if c.MaxDocs < 0 {
		errs = append(errs, fmt.Errorf("max_docs %d: want >= 0", c.MaxDocs))
	}
	return errors.Join(errs...)
}

// Reranker scores requests through a served rerank API. Its Score is a
// rerank.Reranker's Score function. Safe for concurrent use.
type Reranker struct {
	cfg     RerankerConfig
	c       *client
	id      string
	maxDocs atomic.Int64

	sent, pairs atomic.Int64
}

// NewReranker checks cfg and returns a reranker; nothing is sent yet.
func NewReranker(cfg RerankerConfig) (*Reranker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxDocs == 0 {
		cfg.MaxDocs = cfg.API.defaultMaxDocs()
	}
	r := &Reranker{cfg: cfg, c: newClient(cfg.Transport, cfg.API.path())}
	r.id = string(cfg.API) + " " + r.c.url
	r.maxDocs.Store(int64(cfg.MaxDocs))
	return r, nil
}

// Endpoint is the URL requests go to.
func (r *Reranker) Endpoint() string { return r.c.url }

// MaxDocs is the documents per request now (lowered when a server
// refused a request for its size).
func (r *Reranker) MaxDocs() int { return int(r.maxDocs.Load()) }

// Stats counts what was sent: requests that succeeded, pairs scored by
// the server (cache hits excluded), and attempts retried.
func (r *Reranker) Stats() (requests, pairs, retried int64) {
	return r.sent.Load(), r.pairs.Load(), r.c.retried.Load()
}

// Score scores req's documents against its query, in order. Score is the
// server's relevance score (a probability for rerankd and TEI's default,
// whatever the server returns otherwise); Logit is its logit where Score
// is in (0, 1), else Score. Conversation context is refused: no rerank
// API but rerankd's carries it.
func (r *Reranker) Score(ctx context.Context, req rerank.Request) ([]rerank.Score, error) {
	if len(req.Context) > 0 {
		return nil, errors.New("a served rerank API takes no conversation context")
	}
	out := make([]rerank.Score, len(req.Docs))
	keys := make([]Key, len(req.Docs))
	// The documents to send, each once (a list may repeat a text).
	var todo []string
	at := map[string][]int{}
	for i, d := range req.Docs {
		keys[i] = r.key(req, d)
		if r.cfg.Cache != nil {
			if v, ok := r.cfg.Cache.Get(keys[i]); ok && len(v) == 8 {
				out[i] = scoreOf(math.Float64frombits(binary.LittleEndian.Uint64(v)))
				continue
			}
		}
		if _, seen := at[d]; !seen {
			todo = append(todo, d)
		}
		at[d] = append(at[d], i)
	}
	if len(todo) == 0 {
		return out, nil
	}
	scores, err := r.scoreAll(ctx, req, todo)
	if err != nil {
		return nil, err
	}
	var ck []Key
	var cv [][]byte
	for j, d := range todo {
		for _, i := range at[d] {
			out[i] = scoreOf(scores[j])
		}
		if r.cfg.Cache != nil {
			v := make([]byte, 8)
			binary.LittleEndian.PutUint64(v, math.Float64bits(scores[j]))
			ck, cv = append(ck, keys[at[d][0]]), append(cv, v)
		}
	}
	if r.cfg.Cache != nil {
		if err := r.cfg.Cache.Put(ck, cv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// key is a pair's cache key: the server, the model name, every request
// field that changes a score, and the texts.
func (r *Reranker) key(req rerank.Request, doc string) Key {
	return NewKey("rerank", r.id, r.cfg.Model, req.Instruction, strconv.Itoa(req.MaxDocTokens),
		strconv.FormatBool(req.KeepEnd), strconv.FormatBool(req.NoTruncate), req.Query, doc)
}

func scoreOf(s float64) rerank.Score {
	logit := s
	if s > 0 && s < 1 {
		logit = math.Log(s / (1 - s))
	}
	return rerank.Score{Score: s, Logit: logit}
}

// scoreAll scores docs, in requests of at most MaxDocs documents sent
// concurrently (the transport bounds how many are in flight).
func (r *Reranker) scoreAll(ctx context.Context, req rerank.Request, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	n := r.MaxDocs()
	if len(docs) <= n {
		return out, r.scoreChunk(ctx, req, docs, out)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 0)
	var mu sync.Mutex
	for start := 0; start < len(docs); start += n {
		end := min(start+n, len(docs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.scoreChunk(ctx, req, docs[start:end], out[start:end]); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// limitWords say an error is about the request's size.
var (
	limitWords = regexp.MustCompile(`(?i)batch|too many|at most|maximum|max_client|exceed|limit`)
	limitNum   = regexp.MustCompile(`(?i)(?:at most|maximum(?: allowed)?(?: batch size)?(?: is| of)?|max_client_batch_size(?: is)?|limit(?: is| of)?)\s*:?\s*(\d+)`)
)

// scoreChunk scores docs in one request into out; a request refused for
// its size is split (see the package comment).
func (r *Reranker) scoreChunk(ctx context.Context, req rerank.Request, docs []string, out []float64) error {
	if n := r.MaxDocs(); len(docs) > n {
		for start := 0; start < len(docs); start += n {
			end := min(start+n, len(docs))
			if err := r.scoreChunk(ctx, req, docs[start:end], out[start:end]); err != nil {
				return err
			}
		}
		return nil
	}
	got, err := r.send(ctx, req, docs)
	var se *StatusError
	if err != nil && len(docs) > 1 && errors.As(err, &se) && tooBig(se) {
		lower := len(docs) / 2
		if m := limitNum.FindStringSubmatch(se.Msg); m != nil {
			if v, _ := strconv.Atoi(m[1]); v >= 1 && v < len(docs) {
				lower = v
			}
		}
		for {
			cur := r.maxDocs.Load()
			if int64(lower) >= cur || r.maxDocs.CompareAndSwap(cur, int64(lower)) {
				break
			}
		}
		return r.scoreChunk(ctx, req, docs, out)
	}
	if err != nil {
		return err
	}
	copy(out, got)
	return nil
}

func tooBig(se *StatusError) bool {
	switch se.Status {
	case 413:
		return true
	case 400, 422:
		return limitWords.MatchString(se.Msg)
	}
	return false
}

// Wire shapes.
type (
	cohereRequest struct {
		Model               string   `json:"model,omitempty"`
		Query               string   `json:"query"`
		Documents           []string `json:"documents"`
		Instruction         string   `json:"instruction,omitempty"`
		MaxTokensPerDoc     int      `json:"max_tokens_per_doc,omitempty"`
		TruncationDirection string   `json:"truncation_direction,omitempty"`
		Truncate            *bool    `json:"truncate,omitempty"`
	}
	cohereResponse struct {
		Results []struct {
			Index          int      `json:"index"`
			RelevanceScore *float64 `json:"relevance_score"`
		} `json:"results"`
	}
	teiRequest struct {
		Model               string   `json:"model,omitempty"`
		Query               string   `json:"query"`
		Texts               []string `json:"texts"`
		Truncate            bool     `json:"truncate"`
		TruncationDirection string   `json:"truncation_direction,omitempty"`
		Instruction         string   `json:"instruction,omitempty"`
		MaxTokensPerDoc     int      `json:"max_tokens_per_doc,omitempty"`
	}
	teiResult struct {
		Index int      `json:"index"`
		Score *float64 `json:"score"`
	}
)

// send is one request; it checks the answer holds exactly one finite
// score per document.
func (r *Reranker) send(ctx context.Context, req rerank.Request, docs []string) ([]float64, error) {
	dir := ""
	if req.KeepEnd {
		dir = "Left"
	}
	type result struct {
		index int
		score *float64
	}
	var results []result
	switch r.cfg.API {
	case TEI:
		body := teiRequest{Model: r.cfg.Model, Query: req.Query, Texts: docs, Truncate: !req.NoTruncate,
			TruncationDirection: dir, Instruction: req.Instruction, MaxTokensPerDoc: req.MaxDocTokens}
		var resp []teiResult
		if err := r.c.post(ctx, body, &resp); err != nil {
			return nil, err
		}
		for _, x := range resp {
			results = append(results, result{x.Index, x.Score})
		}
	default:
		body := cohereRequest{Model: r.cfg.Model, Query: req.Query, Documents: docs, Instruction: req.Instruction,
			MaxTokensPerDoc: req.MaxDocTokens, TruncationDirection: dir}
		if req.NoTruncate {
			f := false
			body.Truncate = &f
		}
		var resp cohereResponse
		if err := r.c.post(ctx, body, &resp); err != nil {
			return nil, err
		}
		for _, x := range resp.Results {
			results = append(results, result{x.Index, x.RelevanceScore})
		}
	}
	r.sent.Add(1)
	out := make([]float64, len(docs))
	seen := make([]bool, len(docs))
	for _, x := range results {
		if x.index < 0 || x.index >= len(docs) || seen[x.index] {
			return nil, fmt.Errorf("%s: answer has index %d for %d documents (or twice)", r.c.url, x.index, len(docs))
		}
		if x.score == nil || math.IsNaN(*x.score) || math.IsInf(*x.score, 0) {
			return nil, fmt.Errorf("%s: document %d has no finite score", r.c.url, x.index)
		}
		seen[x.index], out[x.index] = true, *x.score
	}
	if len(results) != len(docs) {
		missing := []string{}
		for i, s := range seen {
			if !s {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("%s: answer scores %d of %d documents (missing %s; a top_n or threshold default on the server?)",
			r.c.url, len(results), len(docs), strings.Join(missing, ", "))
	}
	r.pairs.Add(int64(len(docs)))
	return out, nil
}
