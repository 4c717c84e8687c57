package post

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MMRConfig configures MMR.
type MMRConfig struct {
	// Lambda trades relevance against diversity: 1 is plain relevance
	// order, 0 is pure diversity. Must be in [0, 1]. Default 0.7.
	Lambda float64
	// Window is how many top candidates (by current Score) MMR considers;
	// the rest are dropped. It bounds the O(Window²) similarity work.
	// Must be > 0. Default 20.
	Window int
}

// DefaultMMRConfig returns Lambda 0.7 and Window 20.
func DefaultMMRConfig() MMRConfig { return MMRConfig{Lambda: 0.7, Window: 20} }

// Validate reports every invalid field, joined.
func (c MMRConfig) Validate() error {
	var errs []error
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		errs = append(errs, fmt.Errorf("lambda %v: want a number in [0, 1]", c.Lambda))
	}
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("window %d: want a whole number >= 1", c.Window))
	}
	return errors.Join(errs...)
}

func (c MMRConfig) sanitized() MMRConfig {
	d := DefaultMMRConfig()
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		c.Lambda = d.Lambda
	}
	if c.Window <= 0 {
		c.Window = d.Window
	}
	return c
}

// MMR selects up to k candidates by Maximal Marginal Relevance. Only the
// top Window candidates by current Score (ties by ID) are considered. Each
// step picks the remaining candidate maximising
//
//	objective = Lambda*rel - (1-Lambda)*max over selected s of Similarity(c, s)
//
// where rel is the candidate's current Score and the max over an empty
// selection is 0 (so the first pick is the most relevant). Ties in the
// objective go to the higher relevance, then the smaller ID.
//
// Output order is the selection order, NOT Score order: that order is the
// point of MMR. Each output's Score stays its relevance, so later stages
// and the response see a calibrated score rather than an objective that
// depends on what was picked before; the objective at the moment of
// selection is recorded in Scores["mmr"].
//
// k <= 0 or empty input gives an empty slice; k larger than the window
// returns the whole window. Non-finite input scores count as 0; invalid
// config fields fall back to their defaults.
func MMR(cands []Candidate, cfg MMRConfig, k int) []Candidate {
	cfg = cfg.sanitized()
	if k <= 0 || len(cands) == 0 {
		return []Candidate{}
	}
	pool := make([]Candidate, len(cands))
	for i, c := range cands {
		pool[i] = c
		pool[i].Score = finite(c.Score)
	}
	sortCandidates(pool)
	pool = pool[:min(len(pool), cfg.Window)]
	k = min(k, len(pool))

	// Token sets are computed at most once per candidate, and only for
	// pairs that fall back to Jaccard.
	tokens := make([]map[string]struct{}, len(pool))
	tok := func(i int) map[string]struct{} {
		if tokens[i] == nil {
			tokens[i] = Tokens(pool[i].Text)
		}
		return tokens[i]
	}
	sim := func(i, j int) float64 {
		a, b := pool[i].Vector, pool[j].Vector
		if len(a) > 0 && len(a) == len(b) {
			return Cosine(a, b)
		}
		return Jaccard(tok(i), tok(j))
	}

	// maxSim[i] is candidate i's highest similarity to the selection so far.
	maxSim := make([]float64, len(pool))
	picked := make([]bool, len(pool))
	out := make([]Candidate, 0, k)
	for len(out) < k {
		best, bestObj := -1, math.Inf(-1)
		for i := range pool {
			if picked[i] {
				continue
			}
			obj := finite(cfg.Lambda*pool[i].Score - (1-cfg.Lambda)*maxSim[i])
			// pool is in relevance order, so strict > keeps the more
			// relevant (then smaller ID) candidate on ties.
			if best < 0 || obj > bestObj {
				best, bestObj = i, obj
			}
		}
		picked[best] = true
		c := pool[best].clone()
		c.Scores[ScoreMMR] = bestObj
		out = append(out, c)
		for i := range pool {
			if picked[i] {
				continue
			}
			s := sim(i, best)
			if len(out) == 1 || s > maxSim[i] {
				maxSim[i] = s
			}
		}
	}
	return slices.Clip(out)
}
