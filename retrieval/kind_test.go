package retrieval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/store"
)

// TestDescribe: package names go only as whole segments.
func TestDescribe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"retrieval: store: open x.db: locked", "open x.db: locked"},
		{"pgstore: ping: connect: refused", "ping: connect: refused"},
		{"pgstore ping: connect", "pgstore ping: connect"},
		{"memory store unavailable: postgres 127.0.0.1:5432: refused", "memory store unavailable: postgres 127.0.0.1:5432: refused"},
		{"pgput 1 item(s): store: timeout", "pgput 1 item(s): timeout"},
	} {
		if got := Describe(errors.New(c.in)); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestClassify: every error the service returns has its kind, found
// through any wrapping; an error that is not the service's has none.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want ErrorKind
	}{
		{fmt.Errorf("memory a/b: %w", ErrNotFound), KindNotFound},
		{fmt.Errorf("%w: namespace", ErrInvalid), KindInvalid},
		{ErrNoVectors, KindNoVectors},
		{ErrClosed, KindClosed},
		{fmt.Errorf("%w: %w", ErrUnavailable, store.ErrUnavailable), KindStoreDown},
		{fmt.Errorf("%w: %w", ErrUnavailable, store.ErrIncompatible), KindStoreDown},
		{fmt.Errorf("catch-up: %w", ErrUnavailable), KindUnavailable},
		{fmt.Errorf("%w: disk full", ErrStorage), KindStorage},
		{fmt.Errorf("%w: model", ErrEmbed), KindEmbed},
		{fmt.Errorf("inputs[0]: %w", embed.ErrTooLong), KindTooLarge},
		{embed.ErrOverloaded, KindOverloaded},
		{embed.ErrNoMatryoshka, KindBadRequest},
		{fmt.Errorf("wrapped: %w", &Error{Kind: KindInvalid, Msg: "top_k 0: want 1..1000"}), KindInvalid},
	} {
		got := Classify(c.err)
		if got == nil || got.Kind != c.want {
			t.Errorf("%v: %+v, want kind %s", c.err, got, c.want)
		}
	}
	if got := Classify(errors.New("something else")); got != nil {
		t.Errorf("a foreign error classified %+v", got)
	}
	if got := Classify(fmt.Errorf("%w: %w", ErrRerank, errors.New("queue full"))); got != nil {
		t.Errorf("a reranker's error classified %+v: the front that handed the scorer down classifies it", got)
	}
	// The shared database's own words are for the operator.
	e := Classify(fmt.Errorf("%w: %w: postgres://u:secret@db", ErrUnavailable, store.ErrUnavailable))
	if strings.Contains(e.Msg, "secret") || strings.Contains(e.Msg, "postgres") {
		t.Errorf("store-down message leaks the cause: %q", e.Msg)
	}
}

// fakeScorer scores every text 0.5.
type fakeScorer struct{ instructions []string }

func (f *fakeScorer) Score(_ context.Context, instruction, _ string, texts []string) ([]float64, error) {
	f.instructions = append(f.instructions, instruction)
	out := make([]float64, len(texts))
	for i := range out {
		out[i] = 0.5
	}
	return out, nil
}

// TestSearchRequestOf: the API's search parameters get their defaults and
// their checks here, once; every problem is reported at once, naming its
// request field, as a KindInvalid *Error.
func TestSearchRequestOf(t *testing.T) {
	ip := func(v int) *int { return &v }
	fp := func(v float64) *float64 { return &v }
	bp := func(v bool) *bool { return &v }
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	thr := 0.3
	neural := Reranking{Scorer: &fakeScorer{}, ByDefault: true, Threshold: &thr, MaxDepth: 20}
	lexicalOnly := Reranking{Scorer: &fakeScorer{}}
	for _, c := range []struct {
		name  string
		rr    Reranking
		req   api.SearchRequest
		kind  ErrorKind // "": accepted
		field string
		msgs  []string // each in the message
		check func(t *testing.T, r SearchRequest)
	}{
		{name: "defaults, neural", rr: neural, req: api.SearchRequest{Namespace: "a", Query: "q"},
			check: func(t *testing.T, r SearchRequest) {
				if r.Rerank == nil || r.Threshold == nil || *r.Threshold != thr || r.RerankDepth != 20 || r.TopK != 0 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "defaults, lexical: no rerank, no threshold", rr: lexicalOnly, req: api.SearchRequest{Namespace: "a", Query: "q"},
			check: func(t *testing.T, r SearchRequest) {
				if r.Rerank != nil || r.Threshold != nil || r.RerankDepth != DefaultRerankDepth {
					t.Errorf("%+v", r)
				}
			}},
		{name: "rerank asked on lexical", rr: lexicalOnly, req: api.SearchRequest{Namespace: "a", Query: "q", Rerank: bp(true), Threshold: fp(0.1)},
			check: func(t *testing.T, r SearchRequest) {
				if r.Rerank == nil || *r.Threshold != 0.1 {
					t.Errorf("%+v", r)
				}
			}},
		{name: "recency now from the server", rr: neural, req: api.SearchRequest{Namespace: "a", Query: "q", Recency: &api.RecencyParams{HalfLife: "24h"}},
			check: func(t *testing.T, r SearchRequest) {
				if r.Recency == nil || r.Recency.HalfLife != 24*time.Hour || !r.Now.Equal(now) {
					t.Errorf("%+v", r)
				}
			}},
		{name: "blank query", rr: neural, req: api.SearchRequest{Namespace: "a", Query: " \t"}, kind: KindBadRequest, field: "query"},
		{name: "no reranker", req: api.SearchRequest{Namespace: "a", Query: "q", Rerank: bp(true)}, kind: KindInvalid, field: "rerank",
			msgs: []string{"rerank: this server has no reranker"}},
		{name: "every problem at once", rr: neural, kind: KindInvalid, field: "top_k",
			req: api.SearchRequest{Namespace: "../x", Query: "q", TopK: ip(0), Depth: ip(1001), RerankDepth: ip(21), Threshold: fp(2),
				Recency: &api.RecencyParams{HalfLife: "soon"}, MMR: &api.MMRParams{Lambda: fp(7)}, Mode: "fast",
				Fusion: &api.FusionParams{RRFK: fp(-1), Method: "rrf"}, Ranking: &api.RankingParams{Name: "nope"}},
			msgs: []string{"top_k 0: want 1..1000", "depth 1001: want 1..1000", "rerank_depth 21: want 1..20", "threshold 2: want a probability",
				"recency.half_life \"soon\"", "mmr.", "mode \"fast\"", "fusion.", "ranking.name \"nope\"", "namespace \"../x\": starts with '.'"}},
		{name: "threshold without rerank", rr: lexicalOnly, req: api.SearchRequest{Namespace: "a", Query: "q", Threshold: fp(0.5)},
			kind: KindInvalid, field: "threshold", msgs: []string{"threshold needs a reranked search"}},
		{name: "prefer without filters", rr: neural, req: api.SearchRequest{Namespace: "a", Query: "q", Prefer: &api.PreferParams{Weight: fp(0)}},
			kind: KindInvalid, field: "prefer.filters:", msgs: []string{"prefer.filters: required", "prefer.weight 0: want (0, 1]"}},
		{name: "vector without index", rr: neural, req: api.SearchRequest{Namespace: "a", Query: "q", Vector: []float32{1, 2}},
			kind: KindNoVectors, field: "vector", msgs: []string{"vector: "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Rerank = c.rr
			s := newService(t, openStore(t, ""), nil, cfg)
			r, err := s.SearchRequestOf(&c.req, now)
			if c.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, r)
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != c.kind || e.Field != strings.TrimSuffix(c.field, ":") {
				t.Fatalf("error %#v, want kind %s field %s", err, c.kind, c.field)
			}
			for _, m := range c.msgs {
				if !strings.Contains(e.Msg, m) {
					t.Errorf("%q lacks %q", e.Msg, m)
				}
			}
			if strings.Count(e.Msg, "top_k") > 1 || strings.Count(e.Msg, "threshold 2") > 1 {
				t.Errorf("a problem reported twice: %q", e.Msg)
			}
		})
	}
}
