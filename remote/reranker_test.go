package remote

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/rerank"
)

// fastTransport retries quickly so the fault tests take milliseconds.
func fastTransport(url string) Transport {
	t := DefaultTransport()
	t.URL, t.Backoff, t.MaxBackoff, t.Timeout, t.Retries = url, time.Millisecond, 50*time.Millisecond, 2*time.Second, 8
	return t
}

// TestRerankerFaults: against fake servers that cap documents, answer
// 429 and answer too slowly, every query of a batch is scored, each
// document exactly as the server scores it, in request order.
func TestRerankerFaults(t *testing.T) {
	tests := []struct {
		name string
		f    *fake
		// configure adjusts the transport.
		timeout time.Duration
		maxDocs int
		check   func(t *testing.T, f *fake, r *Reranker)
	}{
		{name: "tei cap 32 by default", f: &fake{api: TEI, maxDocs: 32}, check: func(t *testing.T, f *fake, r *Reranker) {
			if f.refusedSize.Load() != 0 {
				t.Errorf("%d requests refused for size; the TEI default is 32", f.refusedSize.Load())
			}
		}},
		{name: "tei unknown cap 7", f: &fake{api: TEI, maxDocs: 7}, maxDocs: 100, check: func(t *testing.T, f *fake, r *Reranker) {
			if r.MaxDocs() != 7 || f.refusedSize.Load() == 0 {
				t.Errorf("cap learned %d after %d refusals, want 7 from the message", r.MaxDocs(), f.refusedSize.Load())
			}
		}},
		{name: "cohere cap 10 (422 naming it)", f: &fake{api: Cohere, maxDocs: 10}, check: func(t *testing.T, f *fake, r *Reranker) {
			if r.MaxDocs() != 10 {
				t.Errorf("cap learned %d, want 10", r.MaxDocs())
			}
		}},
		{name: "429 with Retry-After", f: &fake{api: Cohere, every429: 3, retryAfter: "0.01"}, check: func(t *testing.T, f *fake, r *Reranker) {
			if _, _, retried := r.Stats(); f.refused429.Load() == 0 || retried < f.refused429.Load() {
				t.Errorf("429s %d, retried %d", f.refused429.Load(), retried)
			}
		}},
		{name: "429 without Retry-After", f: &fake{api: TEI, every429: 4}},
		{name: "timeouts", f: &fake{api: Cohere, slowEvery: 5, slow: time.Second}, timeout: 250 * time.Millisecond, check: func(t *testing.T, f *fake, r *Reranker) {
			if f.slowed.Load() == 0 {
				t.Error("no request was slowed")
			}
		}},
		{name: "everything at once", f: &fake{api: TEI, maxDocs: 5, every429: 3, retryAfter: "0", slowEvery: 7, slow: time.Second}, timeout: 250 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.f.start(t)
			cfg := RerankerConfig{Transport: fastTransport(url), API: tc.f.api, MaxDocs: tc.maxDocs}
			// The fake fails every n-th request it sees, whoever sent
			// it: one chunk among a hundred may draw several faults in a
			// row. With a 429 every 3rd and a stall every 7th, nine
			// failures in a row happen about once in 750 chunks; 24
			// retries make it about once in 50 million.
			cfg.Retries = 24
			if tc.timeout > 0 {
				cfg.Timeout = tc.timeout
			}
			r, err := NewReranker(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			const queries = 12
			for q := range queries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					query := "question " + string(rune('a'+q))
					d := docs(20 + 4*q)
					got, err := r.Score(context.Background(), rerank.Request{Query: query, Docs: d})
					if err != nil {
						t.Errorf("query %d: %v", q, err)
						return
					}
					if len(got) != len(d) {
						t.Errorf("query %d: %d scores for %d documents", q, len(got), len(d))
						return
					}
					for i := range d {
						if want := fakeScore(query, d[i]); !near(got[i].Score, want) {
							t.Errorf("query %d doc %d: %v, want %v", q, i, got[i].Score, want)
						}
					}
				}()
			}
			wg.Wait()
			// A slow answer's handler may outlive the attempt the client
			// abandoned, so only fault-free timing is counted.
			if tc.f.slowEvery == 0 && tc.f.maxInFlight > cfg.Concurrency {
				t.Errorf("%d requests in flight, concurrency is %d", tc.f.maxInFlight, cfg.Concurrency)
			}
			if tc.check != nil {
				tc.check(t, tc.f, r)
			}
		})
	}
}

// TestRerankerGivesUp: a server that keeps failing makes an error naming
// the status and its message, after the configured retries; a 4xx that
// is not about size is not retried.
func TestRerankerGivesUp(t *testing.T) {
	always := &fake{api: Cohere, every429: 1}
	url := always.start(t)
	cfg := RerankerConfig{Transport: fastTransport(url), API: Cohere}
	cfg.Retries = 2
	r, _ := NewReranker(cfg)
	_, err := r.Score(context.Background(), rerank.Request{Query: "q", Docs: docs(3)})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusTooManyRequests || !strings.Contains(err.Error(), "rate limited") || !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("err %v", err)
	}
	if always.requests.Load() != 3 {
		t.Errorf("%d requests, want 3 (1 + 2 retries)", always.requests.Load())
	}

	wrong := &fake{api: Cohere}
	url = wrong.start(t)
	cfg = RerankerConfig{Transport: fastTransport(url + "/nowhere"), API: Cohere}
	r, _ = NewReranker(cfg)
	if _, err := r.Score(context.Background(), rerank.Request{Query: "q", Docs: docs(2)}); !errors.As(err, &se) || se.Status != 404 || wrong.requests.Load() != 1 {
		t.Errorf("404: err %v after %d requests", err, wrong.requests.Load())
	}
	if _, err := r.Score(context.Background(), rerank.Request{Query: "q", Docs: docs(2), Context: []string{"hi"}}); err == nil {
		t.Error("context accepted")
	}
}

// TestRerankerCache: a second run sends nothing and gives the same
// scores bit for bit; a run killed half way (a torn last line included)
// resumes, sending only what it had not stored.
func TestRerankerCache(t *testing.T) {
	f := &fake{api: TEI}
	url := f.start(t)
	path := filepath.Join(t.TempDir(), "scores.cache")
	queries := []string{"who", "what", "when", "where"}
	runAll := func(qs []string) map[string][]rerank.Score {
		c, err := OpenCache(path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cfg := RerankerConfig{Transport: fastTransport(url), API: TEI, Model: "m1"}
		cfg.Cache = c
		r, _ := NewReranker(cfg)
		out := map[string][]rerank.Score{}
		for _, q := range qs {
			s, err := r.Score(context.Background(), rerank.Request{Query: q, Docs: docs(40)})
			if err != nil {
				t.Fatal(err)
			}
			out[q] = s
		}
		return out
	}
	first := runAll(queries[:2]) // "killed" after two queries
	if got := f.pairs.Load(); got != 80 {
		t.Fatalf("first run: %d pairs sent, want 80", got)
	}
	appendTorn(t, path)
	all := runAll(queries)
	if got := f.pairs.Load(); got != 160 {
		t.Errorf("resumed run: %d pairs sent in all, want 160 (the two new queries only)", got)
	}
	again := runAll(queries)
	if got := f.pairs.Load(); got != 160 {
		t.Errorf("repeated run sent %d pairs", got-160)
	}
	for _, q := range queries[:2] {
		for i := range first[q] {
			if first[q][i] != all[q][i] || all[q][i] != again[q][i] {
				t.Errorf("%s doc %d: %v, %v, %v", q, i, first[q][i], all[q][i], again[q][i])
			}
		}
	}
	// Another model name is another key.
	c, _ := OpenCache(path)
	defer c.Close()
	cfg := RerankerConfig{Transport: fastTransport(url), API: TEI, Model: "m2"}
	cfg.Cache = c
	r, _ := NewReranker(cfg)
	if _, err := r.Score(context.Background(), rerank.Request{Query: "who", Docs: docs(40)}); err != nil || f.pairs.Load() != 200 {
		t.Errorf("model m2: %v, %d pairs", err, f.pairs.Load())
	}
}

// TestRetryAfterHonoured: a 429's Retry-After sets the wait, not the
// (much shorter) backoff.
func TestRetryAfterHonoured(t *testing.T) {
	f := &fake{api: Cohere, every429: 1, retryAfter: "0.3"}
	url := f.start(t)
	cfg := RerankerConfig{Transport: fastTransport(url), API: Cohere}
	cfg.Retries = 1
	r, _ := NewReranker(cfg)
	start := time.Now()
	_, err := r.Score(context.Background(), rerank.Request{Query: "q", Docs: docs(2)})
	if took := time.Since(start); err == nil || took < 300*time.Millisecond {
		t.Errorf("two 429s answered in %v (err %v): the Retry-After of 0.3 s was not waited for", took, err)
	}
}
