package remote

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is a rerank and embeddings server with faults a real one has: a
// per-request document cap (answered as TEI does, 413), 429s with
// Retry-After, and answers slower than the client's timeout.
type fake struct {
	api     API
	maxDocs int // 0: no cap
	// every429 answers every n-th request with 429 (0: never).
	every429   int
	retryAfter string
	// slowEvery delays every n-th request by slow (0: never).
	slowEvery int
	slow      time.Duration

	requests, served, pairs, refused429, refusedSize, slowed atomic.Int64
	mu                                                       sync.Mutex
	inFlight, maxInFlight                                    int
	dim                                                      int
}

// score is the fake model: a deterministic function of the pair.
func fakeScore(q, d string) float64 {
	h := fnv.New64a()
	h.Write([]byte(q + "\x00" + d))
	return float64(h.Sum64()%1_000_000) / 1_000_000
}

func fakeVec(t string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(fakeScore(t, fmt.Sprint(i)))
	}
	return v
}

func (f *fake) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	f.mu.Lock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if f.every429 > 0 && n%int64(f.every429) == 0 {
		f.refused429.Add(1)
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, `{"message":"rate limited"}`, http.StatusTooManyRequests)
		return
	}
	if f.slowEvery > 0 && n%int64(f.slowEvery) == 0 {
		f.slowed.Add(1)
		select {
		case <-time.After(f.slow):
		case <-r.Context().Done():
			return
		}
	}
	var body struct {
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		Texts     []string `json:"texts"`
		Input     []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"message":"bad json"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/embeddings":
		data := make([]map[string]any, len(body.Input))
		for i, t := range body.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": fakeVec(t, f.dim)}
		}
		f.served.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		return
	case "/rerank":
		if f.api != TEI {
			http.NotFound(w, r)
			return
		}
		if f.maxDocs > 0 && len(body.Texts) > f.maxDocs {
			f.refusedSize.Add(1)
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			fmt.Fprintf(w, `{"error":"batch size %d > maximum allowed batch size %d","error_type":"Validation"}`, len(body.Texts), f.maxDocs)
			return
		}
		res := make([]map[string]any, len(body.Texts))
		for i, d := range body.Texts {
			res[i] = map[string]any{"index": i, "score": fakeScore(body.Query, d)}
		}
		// TEI answers best first.
		for i := range res {
			for j := i + 1; j < len(res); j++ {
				if res[j]["score"].(float64) > res[i]["score"].(float64) {
					res[i], res[j] = res[j], res[i]
				}
			}
		}
		f.served.Add(1)
		f.pairs.Add(int64(len(body.Texts)))
		_ = json.NewEncoder(w).Encode(res)
	case "/v1/rerank":
		if f.maxDocs > 0 && len(body.Documents) > f.maxDocs {
			f.refusedSize.Add(1)
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"message":"%d documents: this server accepts at most %d per request"}`, len(body.Documents), f.maxDocs)
			return
		}
		res := make([]map[string]any, len(body.Documents))
		for i, d := range body.Documents {
			res[len(res)-1-i] = map[string]any{"index": i, "relevance_score": fakeScore(body.Query, d)}
		}
		f.served.Add(1)
		f.pairs.Add(int64(len(body.Documents)))
		_ = json.NewEncoder(w).Encode(map[string]any{"results": res})
	default:
		http.NotFound(w, r)
	}
}

func docs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("memory number %d about %s", i, strings.Repeat("x", i%7))
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
