package post

import (
	"math"
	"strings"
	"testing"
	"time"
)

var (
	now  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	week = 7 * 24 * time.Hour
)

func TestRecencyScore(t *testing.T) {
	tests := []struct {
		name     string
		t        time.Time
		halfLife time.Duration
		want     float64
	}{
		{"age 0", now, week, 1},                                        // 0.5^0
		{"one half-life", now.Add(-week), week, 0.5},                   // 0.5^1
		{"two half-lives", now.Add(-2 * week), week, 0.25},             // 0.5^2
		{"half a half-life", now.Add(-week / 2), week, math.Sqrt2 / 2}, // 0.5^0.5
		{"future clamps to 1", now.Add(time.Hour), week, 1},
		{"far future", now.AddDate(100, 0, 0), week, 1},
		{"zero time is 0", time.Time{}, week, 0},
		{"very old underflows to 0", now.AddDate(-1000, 0, 0), time.Second, 0},
		{"one-day half-life, 3 days", now.Add(-72 * time.Hour), 24 * time.Hour, 0.125}, // 0.5^3
		{"invalid half-life uses 7 days", now.Add(-week), 0, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecencyScore(tc.t, now, tc.halfLife); !near(got, tc.want, 1e-12) {
				t.Errorf("RecencyScore = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRecency(t *testing.T) {
	tests := []struct {
		name  string
		cands []Candidate
		cfg   RecencyConfig
		want  []want
	}{
		{
			// w 0.1, half-life 7 days: score*0.9 + recency*0.1.
			//   old: age 7d,  0.80*0.9 + 0.5*0.1 = 0.72 + 0.05 = 0.77
			//   new: age 0,   0.75*0.9 + 1.0*0.1 = 0.675 + 0.1 = 0.775
			//   nil: zero time, 0.90*0.9 + 0 = 0.81
			// new overtakes old; the undated one keeps its lead.
			name: "blend arithmetic",
			cands: []Candidate{
				{ID: "old", Score: 0.80, Time: now.Add(-week)},
				{ID: "new", Score: 0.75, Time: now},
				{ID: "nil", Score: 0.90},
			},
			cfg:  DefaultRecencyConfig(),
			want: []want{{"nil", 0.81}, {"new", 0.775}, {"old", 0.77}},
		},
		{
			// w 0.5, half-life 1 day: a 0.6*0.5 + 0.25*0.5 = 0.425 (2 days),
			// b 0.2*0.5 + 1*0.5 = 0.6 (future).
			name: "heavy weight, future time",
			cands: []Candidate{
				{ID: "a", Score: 0.6, Time: now.Add(-48 * time.Hour)},
				{ID: "b", Score: 0.2, Time: now.Add(time.Minute)},
			},
			cfg:  RecencyConfig{Weight: 0.5, HalfLife: 24 * time.Hour},
			want: []want{{"b", 0.6}, {"a", 0.425}},
		},
		{
			// w 0: scores unchanged, ties by ID.
			name: "zero weight",
			cands: []Candidate{
				{ID: "z", Score: 0.5, Time: now},
				{ID: "y", Score: 0.5},
			},
			cfg:  RecencyConfig{Weight: 0, HalfLife: week},
			want: []want{{"y", 0.5}, {"z", 0.5}},
		},
		{
			// w 1: score is recency alone; NaN score counts as 0.
			name: "full weight, NaN score",
			cands: []Candidate{
				{ID: "a", Score: math.NaN(), Time: now.Add(-week)},
				{ID: "b", Score: math.Inf(1), Time: now.Add(-2 * week)},
			},
			cfg:  RecencyConfig{Weight: 1, HalfLife: week},
			want: []want{{"a", 0.5}, {"b", 0.25}},
		},
		{
			// Invalid config (weight 2, half-life 0) falls back to defaults:
			// 1*0.9 + 0.5*0.1 = 0.95.
			name:  "invalid config uses defaults",
			cands: []Candidate{{ID: "a", Score: 1, Time: now.Add(-week)}},
			cfg:   RecencyConfig{Weight: 2},
			want:  []want{{"a", 0.95}},
		},
		{name: "empty", cfg: DefaultRecencyConfig(), want: []want{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := make([]Candidate, len(tc.cands))
			for i, c := range tc.cands {
				before[i] = c.clone()
			}
			got := Recency(tc.cands, tc.cfg, now)
			checkWellFormed(t, got, true)
			checkOrder(t, got, tc.want, 1e-12)
			for _, c := range got {
				want := RecencyScore(c.Time, now, tc.cfg.sanitized().HalfLife)
				if c.Scores[ScoreRecency] != want {
					t.Errorf("%q: Scores[recency] = %v, want %v", c.ID, c.Scores[ScoreRecency], want)
				}
			}
			for i, c := range tc.cands {
				if len(c.Scores) != len(before[i].Scores) || !(c.Score == before[i].Score || math.IsNaN(c.Score)) {
					t.Errorf("input %q mutated", c.ID)
				}
			}
		})
	}
}

func TestRecencyKeepsOtherScores(t *testing.T) {
	in := []Candidate{{ID: "a", Score: 0.5, Scores: map[string]float64{ScoreRerank: 0.5}}}
	got := Recency(in, DefaultRecencyConfig(), now)
	if got[0].Scores[ScoreRerank] != 0.5 {
		t.Errorf("rerank score lost: %v", got[0].Scores)
	}
	if _, ok := in[0].Scores[ScoreRecency]; ok {
		t.Errorf("input Scores map was written")
	}
}

func TestRecencyConfigValidate(t *testing.T) {
	if err := DefaultRecencyConfig().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	err := RecencyConfig{Weight: math.NaN(), HalfLife: -time.Second}.Validate()
	if err == nil || !strings.Contains(err.Error(), "weight") || !strings.Contains(err.Error(), "half_life") {
		t.Errorf("want both fields reported, got %v", err)
	}
}
