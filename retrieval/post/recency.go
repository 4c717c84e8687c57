package post

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RecencyConfig configures Recency.
type RecencyConfig struct {
	// Weight is the share of the final score given to recency: score =
	// score*(1-Weight) + recency*Weight. Must be in [0, 1]. Default 0.1.
	Weight float64
	// HalfLife is the age at which recency falls to 0.5. Must be > 0.
	// Default 7 days.
	HalfLife time.Duration
}

// DefaultRecencyConfig returns Weight 0.1 and HalfLife 7 days.
func DefaultRecencyConfig() RecencyConfig {
	return RecencyConfig{Weight: 0.1, HalfLife: 7 * 24 * time.Hour}
}

// Validate reports every invalid field, joined.
func (c RecencyConfig) Validate() error {
	var errs []error
	if !(c.Weight >= 0 && c.Weight <= 1) {
		errs = append(errs, fmt.Errorf("weight %v: want a number in [0, 1]", c.Weight))
	}
	if c.HalfLife <= 0 {
		errs = append(errs, fmt.Errorf("half_life %v: want a duration > 0", c.HalfLife))
	}
	return errors.Join(errs...)
}

func (c RecencyConfig) sanitized() RecencyConfig {
	d := DefaultRecencyConfig()
	if !(c.Weight >= 0 && c.Weight <= 1) {
		c.Weight = d.Weight
	}
	if c.HalfLife <= 0 {
		c.HalfLife = d.HalfLife
	}
	return c
}

// RecencyScore returns 0.5^(age/halfLife) with age = now - t: 1 for a
// memory written now or in the future (age clamps to 0), 0.5 at one
// half-life, 0.25 at two. The zero Time (unknown age) scores 0, as if
// infinitely old: a memory without a date earns no recency bonus. A
// halfLife <= 0 uses the default 7 days.
func RecencyScore(t, now time.Time, halfLife time.Duration) float64 {
	if t.IsZero() {
		return 0
	}
	if halfLife <= 0 {
		halfLife = DefaultRecencyConfig().HalfLife
	}
	age := now.Sub(t) // saturates at ±292 years instead of overflowing
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// Recency blends each candidate's Score with its recency,
// Score*(1-w) + RecencyScore(Time, now, HalfLife)*w, records the recency
// in Scores["recency"], and returns the candidates re-sorted by Score
// descending, ties by ID. now is a parameter so results are reproducible;
// the wall clock is never read. Non-finite input scores count as 0;
// invalid config fields fall back to their defaults.
func Recency(cands []Candidate, cfg RecencyConfig, now time.Time) []Candidate {
	cfg = cfg.sanitized()
	out := make([]Candidate, len(cands))
	for i, c := range cands {
		c = c.clone()
		r := RecencyScore(c.Time, now, cfg.HalfLife)
		c.Scores[ScoreRecency] = r
		c.Score = finite(finite(c.Score)*(1-cfg.Weight) + r*cfg.Weight)
		out[i] = c
	}
	sortCandidates(out)
	return out
}
