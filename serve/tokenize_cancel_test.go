package serve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
)

// TestTokenizeStopsAtDeadline: the request's context reaches
// tokenization. A document of a megabyte takes the tokenizer most of a
// second on its own under -race (measured here, the baseline); with --request-timeout far
// shorter the answer is a 504 timeout long before that, and a client
// that goes away stops the tokenizing too (Neural.Score returns
// context.Canceled); /tokenize answers 504 under the same deadline.
// Timings are compared only with the baseline taken in the same run.
func TestTokenizeStopsAtDeadline(t *testing.T) {
	b, direct := neuralBackend(t, scheduler.DefaultConfig())
	// Distinct words: the BPE word cache cannot shorten the work.
	var sb strings.Builder
	rnd := rand.New(rand.NewPCG(1, 2))
	for sb.Len() < 1<<20 {
		for range 3 + rnd.IntN(8) {
			sb.WriteByte(byte('a' + rnd.IntN(26)))
		}
		sb.WriteByte(' ')
	}
	doc := sb.String()
	req := rerank.Request{Query: "what grows?", Docs: []string{doc}}
	t0 := time.Now()
	if _, err := direct.Prompts(req); err != nil {
		t.Fatal(err)
	}
	full := time.Since(t0)

	cfg := DefaultConfig()
	cfg.RequestTimeout = full / 20
	base := start(t, cfg, b)
	t0 = time.Now()
	r := postJSON(t, base+"/rerank", fmt.Sprintf(`{"query":"what grows?","documents":[%q]}`, doc))
	timedOut := time.Since(t0)
	var e api.Error
	decodeInto(t, r, &e)
	if r.code != http.StatusGatewayTimeout || e.ErrorType != string(KindTimeout) {
		t.Errorf("past the request timeout: %d %+v, want 504 timeout", r.code, e)
	}
	// /tokenize runs the same tokenizing under the same deadline: a 504
	// (not the tokens) says the tokenizer stopped. Its time is only
	// logged: the deadline starts after decoding, and its nested input
	// decodes far slower than /rerank's under the race detector.
	t0 = time.Now()
	r = postJSON(t, base+"/tokenize", fmt.Sprintf(`{"inputs":[["what grows?",%q]]}`, doc))
	tokenizeTimedOut := time.Since(t0)
	if r.code != http.StatusGatewayTimeout {
		t.Errorf("/tokenize past the request timeout: %d, want 504 timeout", r.code)
	} else if decodeInto(t, r, &e); e.ErrorType != string(KindTimeout) {
		t.Errorf("/tokenize past the request timeout: %+v, want error_type timeout", e)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(full/20, cancel)
	t0 = time.Now()
	_, err := b.Score(ctx, req)
	gone := time.Since(t0)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("client gone: %v, want context.Canceled", err)
	}
	// The whole document once more: on a loaded machine the first
	// measure may have run faster than the ones above, so the longer of
	// the two is the bar. Not stopping costs the whole tokenizing (plus
	// the request's decoding); stopping costs the deadline's share.
	t0 = time.Now()
	if _, err := direct.Prompts(req); err != nil {
		t.Fatal(err)
	}
	full = max(full, time.Since(t0))
	t.Logf("tokenizing alone %v; answered after the timeout (%v) in %v (%.2fx; /tokenize %v), stopped after a cancel in %v (%.2fx)",
		full, cfg.RequestTimeout, timedOut, float64(timedOut)/float64(full), tokenizeTimedOut, gone, float64(gone)/float64(full))
	if timedOut > full*3/4 || gone > full*3/4 {
		t.Errorf("tokenizing did not stop: %v and %v against %v for the whole document", timedOut, gone, full)
	}
}
