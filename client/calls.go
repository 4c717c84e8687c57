package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/rerankd/rerankd/api"
)

// Rerank scores r.Documents against r.Query (the Cohere/Jina style).
func (c *Client) Rerank(ctx context.Context, r api.RerankRequest) (*api.RerankResponse, error) {
	var out api.RerankResponse
	if err := c.do(ctx, http.MethodPost, "/rerank", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RerankTEI scores r.Texts against r.Query (the text-embeddings-inference
// style), answered as a bare list sorted by score.
func (c *Client) RerankTEI(ctx context.Context, r api.RerankRequest) ([]api.TEIResult, error) {
	var out []api.TEIResult
	if err := c.do(ctx, http.MethodPost, "/rerank", r, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Embed embeds r.Input with the server's embedding model (POST
// /v1/embeddings, OpenAI's API). The vectors come back as floats whatever
// r.EncodingFormat asks (base64 is decoded). Without an embedding model on
// the server it is an *Error with Status 404.
func (c *Client) Embed(ctx context.Context, r api.EmbeddingsRequest) (*api.EmbeddingsResponse, error) {
	var out api.EmbeddingsResponse
	if err := c.do(ctx, http.MethodPost, "/v1/embeddings", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EmbedTexts is Embed for plain texts: one vector per text, in order.
func (c *Client) EmbedTexts(ctx context.Context, texts ...string) ([][]float32, error) {
	resp, err := c.Embed(ctx, api.EmbeddingsRequest{Input: api.Inputs{Texts: texts, Set: true}})
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("rerankd /v1/embeddings: answer index %d outside the %d texts", d.Index, len(texts))
		}
		out[d.Index] = d.Embedding.Values
	}
	return out, nil
}

// Models lists the served model names (GET /v1/models).
func (c *Client) Models(ctx context.Context) (*api.ModelList, error) {
	var out api.ModelList
	if err := c.do(ctx, http.MethodGet, "/v1/models", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddMemories stores one memory (r's MemoryIn fields) or a batch
// (r.Memories, all or none). Every memory in the answer is durable.
func (c *Client) AddMemories(ctx context.Context, r api.AddMemoriesRequest) (*api.AddMemoriesResponse, error) {
	var out api.AddMemoriesResponse
	if err := c.do(ctx, http.MethodPost, "/v1/memories", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListOptions pages through a namespace.
type ListOptions struct {
	// Limit is the page size (0: the server's default).
	Limit int
	// After is the previous page's Next cursor ("" for the first page).
	After string
	// Filter, when set, lists only the memories it matches.
	Filter *api.Filter
}

// ListMemories returns one page of a namespace's memories, in ID order.
func (c *Client) ListMemories(ctx context.Context, namespace string, o ListOptions) (*api.ListMemoriesResponse, error) {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	if o.Filter != nil {
		b, err := json.Marshal(o.Filter)
		if err != nil {
			return nil, fmt.Errorf("rerankd client: filter: %w", err)
		}
		q.Set("filter", string(b))
	}
	path := "/v1/memories/" + url.PathEscape(namespace)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.ListMemoriesResponse
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateMemory changes the fields r gives of one memory (metadata merged,
// a nil value removing a key) and returns it as stored now.
func (c *Client) UpdateMemory(ctx context.Context, namespace, id string, r api.UpdateMemoryRequest) (*api.UpdateMemoryResponse, error) {
	var out api.UpdateMemoryResponse
	if err := c.do(ctx, http.MethodPatch, memoryPath(namespace, id), r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Forget deletes every memory of a namespace and returns how many there
// were.
func (c *Client) Forget(ctx context.Context, namespace string) (int, error) {
	var out api.ForgetResponse
	if err := c.do(ctx, http.MethodDelete, "/v1/memories/"+url.PathEscape(namespace), nil, &out); err != nil {
		return 0, err
	}
	return out.Deleted, nil
}

// Namespaces lists the namespaces the client's key may read, with counts.
func (c *Client) Namespaces(ctx context.Context) ([]api.NamespaceInfo, error) {
	var out api.NamespacesResponse
	if err := c.do(ctx, http.MethodGet, "/v1/namespaces", nil, &out); err != nil {
		return nil, err
	}
	return out.Namespaces, nil
}

// GetMemory returns one memory; a missing one is an *Error with Status 404.
func (c *Client) GetMemory(ctx context.Context, namespace, id string) (*api.Memory, error) {
	var out api.Memory
	if err := c.do(ctx, http.MethodGet, memoryPath(namespace, id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMemory deletes one memory and reports whether it existed.
func (c *Client) DeleteMemory(ctx context.Context, namespace, id string) (bool, error) {
	var out api.DeleteResponse
	if err := c.do(ctx, http.MethodDelete, memoryPath(namespace, id), nil, &out); err != nil {
		return false, err
	}
	return out.Deleted, nil
}

func memoryPath(namespace, id string) string {
	return "/v1/memories/" + url.PathEscape(namespace) + "/" + url.PathEscape(id)
}

// Search runs the memory search pipeline (retrieve, rerank, threshold,
// recency, MMR) over one namespace.
func (c *Client) Search(ctx context.Context, r api.SearchRequest) (*api.SearchResponse, error) {
	var out api.SearchResponse
	if err := c.do(ctx, http.MethodPost, "/v1/search", r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Info returns the server's limits, backend and calibration.
func (c *Client) Info(ctx context.Context) (*api.Info, error) {
	var out api.Info
	if err := c.do(ctx, http.MethodGet, "/info", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health probes the backend (GET /health); nil when it answers.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/health", nil, nil)
}

// Ready reports readiness (GET /ready); nil when ready. It is not retried
// on 503, whatever the configuration: "not ready yet" is its answer.
func (c *Client) Ready(ctx context.Context) error {
	nc := *c
	nc.cfg.MaxRetries = -1
	return nc.do(ctx, http.MethodGet, "/ready", nil, nil)
}
