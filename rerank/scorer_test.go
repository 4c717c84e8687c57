package rerank

import "testing"

func TestSigmoid(t *testing.T) {
	cases := []struct{ x, want float64 }{{0, 0.5}, {1000, 1}, {-1000, 0}, {2, 0.8807970779778823}, {-2, 0.11920292202211755}}
	for _, c := range cases {
		if got := Sigmoid(c.x); got-c.want > 1e-15 || c.want-got > 1e-15 {
			t.Errorf("Sigmoid(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}
