package retrieval

import (
	"context"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/tracing/span"
)

// Reranker scores texts against a query with a cross-encoder; scores are
// probabilities in [0, 1] (calibrated, when the server has a calibration).
type Reranker interface {
	Rerank(ctx context.Context, query string, texts []string) ([]float64, error)
}

// SearchRequest is one memory search: retrieval plus the optional stages.
type SearchRequest struct {
	Query
	// Rerank, when non-nil, rescores the candidates with the cross-encoder;
	// its probability becomes the score ("rerank").
	Rerank Reranker
	// RerankDepth caps how many of the best retrieved candidates are
	// reranked (0: all); the rest are dropped, since their scores would not
	// be comparable with reranked ones.
	RerankDepth int
	// Threshold drops candidates whose rerank probability is below it;
	// it requires Rerank (a fused score is relative to the other
	// candidates and would make a threshold arbitrary). nil keeps all.
	Threshold *float64
	// Recency, when non-nil, blends in exponential recency decay relative
	// to Now (which must then be set: never the wall clock here).
	Recency *post.RecencyConfig
	Now     time.Time
	// Prefer, when non-nil, favours the memories it matches (after the
	// threshold, before recency): see Prefer.
	Prefer *Prefer
	// MMR, when non-nil, diversifies the final order.
	MMR *post.MMRConfig
	// TopK is how many results to return (0: 10).
	TopK int
	// KeepRest also returns the candidates that passed the threshold but
	// were left out of Results by MMR or top k (SearchResult.Rest), so an
	// evaluation can rank every candidate without a pipeline of its own.
	KeepRest bool
}

// SearchResult is the answer to a SearchRequest.
type SearchResult struct {
	// Results, best first, each with its per-stage scores.
	Results []post.Candidate
	// Rest, with KeepRest: the other candidates that passed the threshold,
	// in score order (after recency).
	Rest []post.Candidate
	// Level, Vectors and Why come from retrieval (see Retrieved).
	Level   Level
	Vectors string
	Why     string
	// Retrieved is how many candidates retrieval proposed; Reranked how
	// many the reranker scored; AboveThreshold how many passed it.
	Retrieved, Reranked, AboveThreshold int
	// Timing of each stage.
	Timing SearchTiming
}

// SearchTiming splits a search's time by stage.
type SearchTiming struct {
	Retrieve, Rerank, Post time.Duration
}

// Prefer is a score term, not a filter: a candidate that Match accepts
// gets score × (1 − Weight) + Weight, any other score × (1 − Weight), so
// at equal relevance the preferred memory ranks first while a much more
// relevant one still wins (e.g. Match: the agent's working directory as
// source, Weight 0.2). Scores["prefer"] is 1 or 0. Weight is in (0, 1].
type Prefer struct {
	Match  *filter.Matcher
	Weight float64
}

// DefaultPreferWeight is Prefer.Weight when a request gives none.
const DefaultPreferWeight = 0.1

// ScorePrefer is the key of the prefer term in Candidate.Scores.
const ScorePrefer = "prefer"

// prefer applies p to cands and sorts them by the new score.
func prefer(cands []post.Candidate, p Prefer) []post.Candidate {
	out := make([]post.Candidate, len(cands))
	for i, c := range cands {
		hit := 0.0
		if p.Match.Match(filter.Fields{ID: c.ID, Time: c.Time, Source: c.Source, Metadata: c.Metadata}) {
			hit = 1
		}
		c.Scores = cloneScores(c.Scores)
		c.Scores[ScorePrefer] = hit
		c.Score = c.Score*(1-p.Weight) + p.Weight*hit
		out[i] = c
	}
	sortByScore(out)
	return out
}

// DefaultTopK is the number of results when SearchRequest.TopK is 0.
const DefaultTopK = 10

// Search runs retrieve → rerank → threshold → recency → MMR → top k.
func (s *Service) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	if err := problemsErr(s.searchProblems(r)); err != nil {
		return SearchResult{}, err
	}
	topK := r.TopK
	if topK == 0 {
		topK = DefaultTopK
	}
	t0 := time.Now()
	got, err := s.retrieveChecked(ctx, r.Query)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Level: got.Level, Vectors: got.Vectors, Why: got.Why, Retrieved: len(got.Candidates)}
	res.Timing.Retrieve = time.Since(t0)
	cands := got.Candidates

	if r.Rerank != nil && len(cands) > 0 {
		t1 := time.Now()
		if r.RerankDepth > 0 && len(cands) > r.RerankDepth {
			cands = cands[:r.RerankDepth]
		}
		rctx, sp := span.Start(ctx, tracerName, "rerankd.rerank", attribute.Int("rerankd.candidates", len(cands)))
		cands, err = rerank(rctx, r.Rerank, r.Text, cands)
		span.End(sp, err)
		if err != nil {
			return SearchResult{}, err
		}
		res.Reranked = len(cands)
		res.Timing.Rerank = time.Since(t1)
	}

	t2 := time.Now()
	if r.Threshold != nil {
		_, sp := span.Start(ctx, tracerName, "rerankd.threshold", attribute.Int("rerankd.candidates", len(cands)))
		kept := cands[:0:0]
		for _, c := range cands {
			if c.Score >= *r.Threshold {
				kept = append(kept, c)
			}
		}
		cands = kept
		sp.SetAttributes(attribute.Int("rerankd.kept", len(cands)))
		sp.End()
	}
	res.AboveThreshold = len(cands)
	if r.Prefer != nil {
		_, sp := span.Start(ctx, tracerName, "rerankd.prefer", attribute.Int("rerankd.candidates", len(cands)))
		cands = prefer(cands, *r.Prefer)
		sp.End()
	}
	if r.Recency != nil {
		_, sp := span.Start(ctx, tracerName, "rerankd.recency", attribute.Int("rerankd.candidates", len(cands)))
		cands = post.Recency(cands, *r.Recency, r.Now)
		sp.End()
	}
	ranked := cands
	if r.MMR != nil {
		_, sp := span.Start(ctx, tracerName, "rerankd.mmr", attribute.Int("rerankd.candidates", len(cands)))
		cands = post.MMR(cands, *r.MMR, topK)
		sp.End()
	}
	if len(cands) > topK {
		cands = cands[:topK]
	}
	res.Results = cands
	if r.KeepRest {
		res.Rest = rest(ranked, cands)
	}
	res.Timing.Post = time.Since(t2)
	return res, nil
}

// rest returns the candidates of ranked not in results, in ranked's order.
func rest(ranked, results []post.Candidate) []post.Candidate {
	in := make(map[string]bool, len(results))
	for _, c := range results {
		in[c.ID] = true
	}
	out := make([]post.Candidate, 0, len(ranked)-len(results))
	for _, c := range ranked {
		if !in[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// searchProblems reports every problem of r, each naming its request
// field (SearchRequestOf's callers see them in their API's terms), and
// whether one is a vector the service has no index for.
func (s *Service) searchProblems(r SearchRequest) (probs []string, noVectors bool) {
	probs, noVectors = s.queryProblems(r.Query)
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if r.TopK < 0 {
		bad("top_k %d: want >= 1 (0: the default, %d)", r.TopK, DefaultTopK)
	}
	if r.RerankDepth < 0 {
		bad("rerank_depth %d: want >= 1 (0: every candidate)", r.RerankDepth)
	}
	if t := r.Threshold; t != nil && !(*t >= 0 && *t <= 1) {
		bad("threshold %v: want a probability in [0, 1]", *t)
	}
	if r.Threshold != nil && r.Rerank == nil {
		// The fused score is min-max normalised over the candidates: a
		// memory's score depends on what else was retrieved, so a
		// threshold on it would keep or drop the same memory by chance.
		bad("threshold needs a reranked search: send \"rerank\": true, or leave threshold out (without rerank the fused retrieval score is relative to the other candidates, the last always 0, so no threshold means the same from one search to the next)")
	}
	if r.Recency != nil {
		probs = append(probs, fieldProblems("recency", r.Recency.Validate())...)
		if r.Now.IsZero() {
			bad("recency.now: a reference time is required")
		}
	}
	if p := r.Prefer; p != nil {
		if p.Match == nil {
			bad("prefer.filters: required (the memories to favour)")
		}
		if !(p.Weight > 0 && p.Weight <= 1) {
			bad("prefer.weight %v: want (0, 1]", p.Weight)
		}
	}
	if r.MMR != nil {
		probs = append(probs, fieldProblems("mmr", r.MMR.Validate())...)
	}
	return probs, noVectors
}

// rerank replaces each candidate's score by the reranker's probability.
func rerank(ctx context.Context, rr Reranker, query string, cands []post.Candidate) ([]post.Candidate, error) {
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Text
	}
	scores, err := rr.Rerank(ctx, query, texts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrRerank, err)
	}
	if len(scores) != len(cands) {
		return nil, fmt.Errorf("%w: %d scores for %d candidates", ErrRerank, len(scores), len(cands))
	}
	out := make([]post.Candidate, len(cands))
	for i, c := range cands {
		s := scores[i]
		if math.IsNaN(s) || s < 0 || s > 1 {
			return nil, fmt.Errorf("%w: score %v for candidate %q is not a probability", ErrRerank, s, c.ID)
		}
		c.Scores = cloneScores(c.Scores)
		c.Scores[post.ScoreRerank] = s
		c.Score = s
		out[i] = c
	}
	sortByScore(out)
	return out, nil
}
