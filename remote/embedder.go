package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// EmbedderConfig configures an Embedder (OpenAI's embeddings API).
type EmbedderConfig struct {
	Transport
	// Model is the model name sent ("": none).
	Model string
	// QueryPrefix is put before every query (the isQuery side) and
	// nothing before documents: an asymmetric model's query instruction,
	// e.g. Qwen3-Embedding's "Instruct: ...\nQuery:". The OpenAI API has
	// no query side of its own.
	QueryPrefix string
	// MaxInputs bounds the texts of one request (>= 1).
	MaxInputs int
}

// DefaultEmbedderConfig returns the defaults for url: 64 texts a request.
func DefaultEmbedderConfig(url string) EmbedderConfig {
	t := DefaultTransport()
	t.URL = url
	return EmbedderConfig{Transport: t, MaxInputs: 64}
}

// Validate reports every problem at once.
func (c EmbedderConfig) Validate() error {
	errs := flatten(c.Transport.Validate())
	if c.MaxInputs < 1 {
		errs = append(errs, fmt.Errorf("max_inputs %d: want >= 1", c.MaxInputs))
	}
	return errors.Join(errs...)
}

// Embedder embeds texts through POST /v1/embeddings; it is a
// retrieval.Embedder. Safe for concurrent use.
type Embedder struct {
	cfg EmbedderConfig
	c   *client
	id  string
	dim int

	sent, texts atomic.Int64
}

// NewEmbedder checks cfg and learns the vector size from one request
// (cached as any other).
func NewEmbedder(ctx context.Context, cfg EmbedderConfig) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Embedder{cfg: cfg, c: newClient(cfg.Transport, "/v1/embeddings")}
	e.id = "openai " + e.c.url
	v, err := e.Embed(ctx, []string{"dimension probe"}, false)
	if err != nil {
		return nil, err
	}
	e.dim = len(v[0])
	return e, nil
}

// Endpoint is the URL requests go to.
func (e *Embedder) Endpoint() string { return e.c.url }

// Dim is the vector size.
func (e *Embedder) Dim() int { return e.dim }

// Stats counts requests that succeeded, texts the server embedded (cache
// hits excluded) and attempts retried.
func (e *Embedder) Stats() (requests, texts, retried int64) {
	return e.sent.Load(), e.texts.Load(), e.c.retried.Load()
}

type (
	embedRequest struct {
		Model          string   `json:"model,omitempty"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
	}
	embedResponse struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
)

// Embed returns one vector per text, in order.
func (e *Embedder) Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([]Key, len(texts))
	var todo []int
	for i, t := range texts {
		if isQuery {
			t = e.cfg.QueryPrefix + t
		}
		keys[i] = NewKey("embed", e.id, e.cfg.Model, t)
		if e.cfg.Cache != nil {
			if v, ok := e.cfg.Cache.Get(keys[i]); ok && len(v) > 0 && len(v)%4 == 0 {
				out[i] = decodeVec(v)
				continue
			}
		}
		todo = append(todo, i)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for start := 0; start < len(todo); start += e.cfg.MaxInputs {
		idx := todo[start:min(start+e.cfg.MaxInputs, len(todo))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := make([]string, len(idx))
			for j, i := range idx {
				in[j] = texts[i]
				if isQuery {
					in[j] = e.cfg.QueryPrefix + in[j]
				}
			}
			vecs, err := e.send(ctx, in)
			if err == nil && e.cfg.Cache != nil {
				ck, cv := make([]Key, len(idx)), make([][]byte, len(idx))
				for j, i := range idx {
					ck[j], cv[j] = keys[i], encodeVec(vecs[j])
				}
				err = e.cfg.Cache.Put(ck, cv)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				cancel()
				return
			}
			for j, i := range idx {
				out[i] = vecs[j]
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for i, v := range out {
		if e.dim != 0 && len(v) != e.dim {
			return nil, fmt.Errorf("%s: text %d has a vector of %d, want %d", e.c.url, i, len(v), e.dim)
		}
	}
	return out, nil
}

// send is one request; the answer must hold one vector per input, all of
// one size, finite.
func (e *Embedder) send(ctx context.Context, in []string) ([][]float32, error) {
	var resp embedResponse
	if err := e.c.post(ctx, embedRequest{Model: e.cfg.Model, Input: in, EncodingFormat: "float"}, &resp); err != nil {
		return nil, err
	}
	e.sent.Add(1)
	out := make([][]float32, len(in))
	dim := 0
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(in) || out[d.Index] != nil {
			return nil, fmt.Errorf("%s: answer has index %d for %d inputs (or twice)", e.c.url, d.Index, len(in))
		}
		if dim == 0 {
			dim = len(d.Embedding)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != dim {
			return nil, fmt.Errorf("%s: input %d: vector of %d values", e.c.url, d.Index, len(d.Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%s: input %d: vector is not finite", e.c.url, d.Index)
			}
		}
		out[d.Index] = d.Embedding
	}
	if len(resp.Data) != len(in) {
		return nil, fmt.Errorf("%s: answer has %d vectors for %d inputs", e.c.url, len(resp.Data), len(in))
	}
	e.texts.Add(int64(len(in)))
	return out, nil
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
