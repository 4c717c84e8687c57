package post

import (
	"math"
	"testing"
)

const eps = 1e-9

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// checkWellFormed asserts the package-wide output invariants: no NaN or
// Inf in Score or Scores, and (when sorted is true) Score descending with
// ties by ID ascending.
func checkWellFormed(t testing.TB, got []Candidate, sorted bool) {
	t.Helper()
	for i, c := range got {
		if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) {
			t.Fatalf("candidate %d (%q): non-finite Score %v", i, c.ID, c.Score)
		}
		for k, v := range c.Scores {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("candidate %d (%q): non-finite Scores[%q] = %v", i, c.ID, k, v)
			}
		}
		if sorted && i > 0 && compareCandidates(got[i-1], c) > 0 {
			t.Fatalf("not sorted at %d: %q %v before %q %v", i, got[i-1].ID, got[i-1].Score, c.ID, c.Score)
		}
	}
}

type want struct {
	id    string
	score float64
}

func checkOrder(t *testing.T, got []Candidate, w []want, tol float64) {
	t.Helper()
	if len(got) != len(w) {
		t.Fatalf("got %d candidates %v, want %d", len(got), ids(got), len(w))
	}
	for i := range w {
		if got[i].ID != w[i].id || !near(got[i].Score, w[i].score, tol) {
			t.Errorf("position %d: got %q %.12f, want %q %.12f", i, got[i].ID, got[i].Score, w[i].id, w[i].score)
		}
	}
}

func ids(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
