package metrics

import (
	"math"
	"testing"
)

func TestPairedT(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		wantT float64
		wantP float64
	}{
		// d = 1..5: mean 3, sd sqrt(2.5), t = 3/(sqrt(2.5)/sqrt(5)) =
		// 4.2426; two-sided p at 4 df = 0.013235 (scipy.stats.ttest_rel).
		{"textbook", []float64{0, 0, 0, 0, 0}, []float64{1, 2, 3, 4, 5}, 4.242640687, 0.0132356},
		{"reversed", []float64{1, 2, 3, 4, 5}, []float64{0, 0, 0, 0, 0}, -4.242640687, 0.0132356},
		{"same", []float64{0.1, 0.5}, []float64{0.1, 0.5}, 0, 1},
		{"constant shift", []float64{0.1, 0.5, 0.2}, []float64{0.2, 0.6, 0.3}, math.Inf(1), 0},
	}
	for _, tc := range tests {
		tt, p, err := PairedT(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(tc.wantT, 0) {
			// Rounding of 0.1+0.1 makes the shift not exactly constant.
			if math.Abs(tt) < 1e6 || p > 1e-6 {
				t.Errorf("%s: t %v p %v", tc.name, tt, p)
			}
			continue
		}
		if math.Abs(tt-tc.wantT) > 1e-6 || math.Abs(p-tc.wantP) > 1e-6 {
			t.Errorf("%s: t %v p %v, want %v %v", tc.name, tt, p, tc.wantT, tc.wantP)
		}
	}
	if _, _, err := PairedT([]float64{1}, []float64{2}); err == nil {
		t.Error("one query accepted")
	}
}

func TestRandomization(t *testing.T) {
	// Ten equal positive differences: of the 1024 sign patterns only the
	// two uniform ones reach the observed |sum|, so the exact p is 2/1024.
	a, b := make([]float64, 10), make([]float64, 10)
	for i := range b {
		b[i] = 0.1
	}
	p, err := Randomization(a, b, 100000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p-2.0/1024) > 0.0006 {
		t.Errorf("p %v, want about %v", p, 2.0/1024)
	}
	// Identical runs: every permutation ties, p = 1.
	if p, _ := Randomization(b, b, 1000, 1); p != 1 {
		t.Errorf("identical: p %v", p)
	}
	// d = {1, -1, 1, -1}: |sum| 0 is reached by every pattern.
	if p, _ := Randomization([]float64{0, 1, 0, 1}, []float64{1, 0, 1, 0}, 1000, 7); p != 1 {
		t.Errorf("balanced: p %v", p)
	}
	// Seeded: the same seed, the same p; symmetric in a and b.
	x := []float64{0.1, 0.4, 0.35, 0.8, 0.2, 0.5}
	y := []float64{0.3, 0.2, 0.5, 0.9, 0.4, 0.45}
	p1, _ := Randomization(x, y, 5000, 42)
	p2, _ := Randomization(x, y, 5000, 42)
	p3, _ := Randomization(y, x, 5000, 42)
	if p1 != p2 || p1 != p3 {
		t.Errorf("seeded p %v %v %v", p1, p2, p3)
	}
	if _, err := Randomization(x, y[:3], 10, 1); err == nil {
		t.Error("unpaired lists accepted")
	}
}
