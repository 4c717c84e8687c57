package post

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Hit is one result of a single retriever (BM25 or vector search).
type Hit struct {
	// ID identifies the memory.
	ID string
	// Score is the retriever's raw score, higher is better. NaN and ±Inf
	// are treated as 0.
	Score float64
}

// FusionMethod selects how Fuse combines the two lists.
type FusionMethod string

const (
	// WeightedSum min-max normalises each list to [0, 1] and takes the
	// weighted mean of the two normalised scores. The default.
	WeightedSum FusionMethod = "weighted_sum"
	// RRF is Reciprocal Rank Fusion: score = Σ 1/(k + rank), rank 1-based.
	RRF FusionMethod = "rrf"
)

// FusionConfig configures Fuse.
type FusionConfig struct {
	// Method is WeightedSum or RRF; empty means WeightedSum.
	Method FusionMethod
	// VectorWeight weighs the normalised vector score in WeightedSum. Must
	// be finite and >= 0, and not 0 together with BM25Weight. Default 0.7.
	VectorWeight float64
	// BM25Weight weighs the normalised BM25 score in WeightedSum. Must be
	// finite and >= 0. Default 0.3.
	BM25Weight float64
	// RRFK is the rank offset k of RRF: larger values flatten the
	// difference between top and lower ranks. Must be finite and > 0.
	// Default 60.
	RRFK float64
}

// DefaultFusionConfig returns WeightedSum with weights 0.7 vector, 0.3
// BM25, and RRFK 60.
func DefaultFusionConfig() FusionConfig {
	return FusionConfig{Method: WeightedSum, VectorWeight: 0.7, BM25Weight: 0.3, RRFK: 60}
}

func validWeight(w float64) bool { return w >= 0 && !math.IsInf(w, 1) }

// Validate reports every invalid field, joined.
func (c FusionConfig) Validate() error {
	var errs []error
	if c.Method != "" && c.Method != WeightedSum && c.Method != RRF {
		errs = append(errs, fmt.Errorf("method %q: want %q or %q", c.Method, WeightedSum, RRF))
	}
	if !validWeight(c.VectorWeight) {
		errs = append(errs, fmt.Errorf("vector_weight %v: want a finite number >= 0", c.VectorWeight))
	}
	if !validWeight(c.BM25Weight) {
		errs = append(errs, fmt.Errorf("bm25_weight %v: want a finite number >= 0", c.BM25Weight))
	}
	if c.VectorWeight == 0 && c.BM25Weight == 0 {
		errs = append(errs, errors.New("vector_weight and bm25_weight must not both be 0"))
	}
	if !(c.RRFK > 0) || math.IsInf(c.RRFK, 1) {
		errs = append(errs, fmt.Errorf("rrf_k %v: want a finite number > 0", c.RRFK))
	}
	return errors.Join(errs...)
}

// sanitized replaces invalid fields by their defaults. Invalid weights
// (either one invalid, or both 0) reset both, so the ratio stays meaningful.
func (c FusionConfig) sanitized() FusionConfig {
	d := DefaultFusionConfig()
	if c.Method != WeightedSum && c.Method != RRF {
		c.Method = d.Method
	}
	if !validWeight(c.VectorWeight) || !validWeight(c.BM25Weight) || c.VectorWeight+c.BM25Weight == 0 {
		c.VectorWeight, c.BM25Weight = d.VectorWeight, d.BM25Weight
	}
	if !(c.RRFK > 0) || math.IsInf(c.RRFK, 1) {
		c.RRFK = d.RRFK
	}
	return c
}

// Fuse merges BM25 and vector hits into one candidate list: the union of
// both, sorted by fused Score descending, ties by ID ascending.
//
// WeightedSum: each list is min-max normalised within the query,
// n = (s - min)/(max - min), a list with max == min gives 1 to all its
// members; a candidate missing from a list gets 0 for it; fused =
// (wv*n_vector + wb*n_bm25)/(wv + wb), in [0, 1] (the defaults sum to 1, so
// this is 0.7*n_vector + 0.3*n_bm25).
//
// RRF: each list is ranked by score descending (ties by ID), rank 1 first;
// fused = Σ over the lists containing the candidate of 1/(k + rank).
//
// Non-finite scores count as 0. An ID repeated within one list keeps its
// highest score. Scores records the raw (finite) "bm25" and "vector" score
// for the lists that contain the candidate, and "fused". Text, Time and
// Vector are left empty for the caller to fill from the store. Invalid
// config fields fall back to their defaults; see FusionConfig.Validate.
func Fuse(bm25, vector []Hit, cfg FusionConfig) []Candidate {
	cfg = cfg.sanitized()
	b := dedupe(bm25)
	v := dedupe(vector)

	index := make(map[string]int, len(b)+len(v))
	out := make([]Candidate, 0, len(b)+len(v))
	get := func(id string) *Candidate {
		i, ok := index[id]
		if !ok {
			i = len(out)
			index[id] = i
			out = append(out, Candidate{ID: id, Scores: make(map[string]float64, 3)})
		}
		return &out[i]
	}

	switch cfg.Method {
	case RRF:
		for _, list := range []struct {
			key  string
			hits []Hit
		}{{ScoreBM25, b}, {ScoreVector, v}} {
			for rank, h := range list.hits {
				c := get(h.ID)
				c.Scores[list.key] = h.Score
				c.Score += 1 / (cfg.RRFK + float64(rank+1))
			}
		}
	default:
		wv, wb := cfg.VectorWeight, cfg.BM25Weight
		// Scale by the larger weight so wv + wb cannot overflow; the sum is
		// then in [1, 2].
		m := max(wv, wb)
		wv, wb = wv/m, wb/m
		sum := wv + wb
		for _, list := range []struct {
			key  string
			hits []Hit
			w    float64
		}{{ScoreBM25, b, wb}, {ScoreVector, v, wv}} {
			norm := minMax(list.hits)
			for _, h := range list.hits {
				c := get(h.ID)
				c.Scores[list.key] = h.Score
				c.Score += list.w * norm(h.Score) / sum
			}
		}
	}
	for i := range out {
		out[i].Score = nonNegative(out[i].Score)
		out[i].Scores[ScoreFused] = out[i].Score
	}
	sortCandidates(out)
	return out
}

// nonNegative guards against rounding pushing a fused score below 0;
// it only ever returns finite values.
func nonNegative(x float64) float64 { return max(finite(x), 0) }

// dedupe returns hits with finite scores, one per ID (the highest score),
// sorted by score descending, ties by ID ascending. hits is not modified.
func dedupe(hits []Hit) []Hit {
	out := make([]Hit, 0, len(hits))
	seen := make(map[string]int, len(hits))
	for _, h := range hits {
		h.Score = finite(h.Score)
		if i, ok := seen[h.ID]; ok {
			out[i].Score = max(out[i].Score, h.Score)
			continue
		}
		seen[h.ID] = len(out)
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// minMax returns the min-max normaliser of sorted, finite hits: s ↦
// (s - min)/(max - min) clamped to [0, 1], or 1 for every s when max ==
// min. Scores are halved first when max - min would overflow.
func minMax(sorted []Hit) func(float64) float64 {
	if len(sorted) == 0 {
		return func(float64) float64 { return 0 }
	}
	hi, lo := sorted[0].Score, sorted[len(sorted)-1].Score
	if hi == lo {
		return func(float64) float64 { return 1 }
	}
	scale := 1.0
	if math.IsInf(hi-lo, 0) {
		scale = 0.5
	}
	span := hi*scale - lo*scale
	return func(s float64) float64 {
		return min(max((s*scale-lo*scale)/span, 0), 1)
	}
}
