package calibrate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/optimize"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func bools(s string) []bool {
	out := make([]bool, len(s))
	for i, c := range s {
		out[i] = c == '1'
	}
	return out
}

func TestSweepTies(t *testing.T) {
	scores := []float64{0.9, 0.8, 0.8, 0.3, 0.1}
	labels := bools("11001")
	// Worked by hand: 3 positives, 2 negatives; the two 0.8s move together.
	want := []Point{
		{Threshold: 0.9, TP: 1, FP: 0, FN: 2, TN: 2, Precision: 1, Recall: 1.0 / 3, F1: 0.5, Kept: 0.2, FPR: 0},
		{Threshold: 0.8, TP: 2, FP: 1, FN: 1, TN: 1, Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3, Kept: 0.6, FPR: 0.5},
		{Threshold: 0.3, TP: 2, FP: 2, FN: 1, TN: 0, Precision: 0.5, Recall: 2.0 / 3, F1: 4.0 / 7, Kept: 0.8, FPR: 1},
		{Threshold: 0.1, TP: 3, FP: 2, FN: 0, TN: 0, Precision: 0.6, Recall: 1, F1: 0.75, Kept: 1, FPR: 1},
	}
	got := Sweep(scores, labels)
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Threshold != w.Threshold || g.TP != w.TP || g.FP != w.FP || g.FN != w.FN || g.TN != w.TN ||
			!near(g.Precision, w.Precision, 1e-12) || !near(g.Recall, w.Recall, 1e-12) || !near(g.F1, w.F1, 1e-12) ||
			!near(g.Kept, w.Kept, 1e-12) || !near(g.FPR, w.FPR, 1e-12) {
			t.Errorf("point %d = %+v, want %+v", i, g, w)
		}
	}
	rules := []struct {
		rule string
		want float64
		ok   bool
	}{
		{"maxf1", 0.1, true},
		{"youden", 0.9, true}, // J: 1/3, 1/6, -1/3, 0
		{"precision:0.6", 0.1, true},
		{"precision:0.65", 0.8, true},
		{"precision:1", 0.9, true},
	}
	for _, r := range rules {
		rule, err := ParseRule(r.rule)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := rule.Choose(got); p.Threshold != r.want || ok != r.ok {
			t.Errorf("%s: threshold %v ok %v, want %v %v", r.rule, p.Threshold, ok, r.want, r.ok)
		}
	}
	// Unreachable target: the best precision there is, flagged.
	rule, _ := ParseRule("precision:0.8")
	if p, ok := rule.Choose(Sweep([]float64{0.9, 0.5}, bools("01"))); ok || p.Threshold != 0.5 {
		t.Errorf("unreachable target: %+v ok %v, want threshold 0.5, not ok", p, ok)
	}
	if _, ok := rule.Choose(nil); ok {
		t.Error("Choose(nil) ok")
	}
}

func TestParseRule(t *testing.T) {
	for _, s := range []string{"maxf1", "youden", "manual", "precision:0.8", "precision:1"} {
		r, err := ParseRule(s)
		if err != nil || r.String() != s {
			t.Errorf("ParseRule(%q) = %v, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "f1", "precision", "precision:", "precision:0", "precision:1.5", "precision:NaN", "maxf1:2"} {
		if _, err := ParseRule(s); err == nil {
			t.Errorf("ParseRule(%q): no error", s)
		}
	}
}

func TestIsotonicPAV(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		labels string
		x, y   []float64
	}{
		// 1:1 2:0 pool to 1/2, then 3:0 pools to 1/3; 4:1 5:0 pool to 1/2; 6:1.
		{"violators", []float64{1, 2, 3, 4, 5, 6}, "100101", []float64{1, 3, 4, 5, 6}, []float64{1.0 / 3, 1.0 / 3, 0.5, 0.5, 1}},
		// Ties pooled first: {1,1} = 1/2 and {2,2,2} = 2/3 are in order.
		// Pooling a tie group piecemeal would wrongly merge them.
		{"ties", []float64{1, 1, 2, 2, 2}, "10011", []float64{1, 2}, []float64{0.5, 2.0 / 3}},
		{"tie violators", []float64{1, 1, 2, 2, 3}, "10001", []float64{1, 2, 3}, []float64{0.25, 0.25, 1}},
		{"constant", []float64{5, 5, 5}, "011", []float64{5}, []float64{2.0 / 3}},
		{"unsorted input", []float64{3, 1, 2}, "101", []float64{1, 2, 3}, []float64{0, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := FitIsotonic(c.scores, bools(c.labels))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.X, c.x) || len(m.Y) != len(c.y) {
				t.Fatalf("knots %v %v, want %v %v", m.X, m.Y, c.x, c.y)
			}
			for i := range c.y {
				if !near(m.Y[i], c.y[i], 1e-12) {
					t.Fatalf("y %v, want %v", m.Y, c.y)
				}
			}
		})
	}
	m, _ := FitIsotonic([]float64{1, 2, 3, 4, 5, 6}, bools("100101"))
	for _, c := range [][2]float64{{0, 1.0 / 3}, {3, 1.0 / 3}, {3.5, 5.0 / 12}, {4.5, 0.5}, {5.5, 0.75}, {7, 1}} {
		if got := m.Prob(c[0]); !near(got, c[1], 1e-12) {
			t.Errorf("Prob(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if _, err := FitIsotonic([]float64{1, math.NaN()}, bools("01")); err == nil {
		t.Error("NaN score accepted")
	}
}

// TestIsotonicProperties: on random data the fit is monotone, its knots
// are valid, and (a PAV identity) the fitted values sum to the positives.
func TestIsotonicProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		scores, labels := make([]float64, n), make([]bool, n)
		pos := 0
		for i := range scores {
			scores[i] = math.Round(rng.NormFloat64()*4) / 4 // many ties
			if labels[i] = rng.Float64() < sigmoid(scores[i]); labels[i] {
				pos++
			}
		}
		m, err := FitIsotonic(scores, labels)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.validate(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		sum := 0.0
		for _, s := range scores {
			sum += m.Prob(s)
		}
		if !near(sum, float64(pos), 1e-9) {
			t.Fatalf("trial %d: fitted values sum to %v, want %d positives", trial, sum, pos)
		}
		prev := -1.0
		for x := -6.0; x <= 6; x += 0.01 {
			p := m.Prob(x)
			if p < prev || p < 0 || p > 1 {
				t.Fatalf("trial %d: Prob(%v) = %v after %v", trial, x, p, prev)
			}
			prev = p
		}
	}
}

func TestPlattHandComputed(t *testing.T) {
	ln := math.Log
	cases := []struct {
		name          string
		scores        []float64
		labels        string
		feature       Feature
		slope, icept  float64
		wantFlattened bool
	}{
		// With a two-valued feature the fit is saturated: p(x) is the mean
		// smoothed target at x. Non-separable: 3 pos, 3 neg, so targets
		// 4/5 and 1/5; p(0) = (0.8+0.2+0.2)/3 = 0.4, p(1) = 0.6.
		{"non-separable", []float64{0, 0, 0, 1, 1, 1}, "100110", FeatureScore, 2 * ln(1.5), ln(2.0 / 3), false},
		// Separable: targets 3/4 and 1/4 keep the fit finite: p(0) = 1/4,
		// p(1) = 3/4.
		{"separable", []float64{0, 0, 1, 1}, "0011", FeatureScore, 2 * ln(3), -ln(3), false},
		// The same through logit: logit(0.5) = 0, logit(sigmoid(1)) = 1.
		{"logit feature", []float64{0.5, 0.5, sigmoid(1), sigmoid(1)}, "0011", FeatureLogit, 2 * ln(3), -ln(3), false},
		// Anti-correlated: flattened to the mean target, 1/2.
		{"negative slope", []float64{0, 0, 1, 1}, "1100", FeatureScore, 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, fit, err := FitPlatt(c.scores, bools(c.labels), c.feature)
			if err != nil {
				t.Fatal(err)
			}
			if !near(p.Slope, c.slope, 1e-5) || !near(p.Intercept, c.icept, 1e-5) || fit.Flattened != c.wantFlattened {
				t.Errorf("slope %v intercept %v flattened %v (%+v); want %v %v %v", p.Slope, p.Intercept, fit.Flattened, fit, c.slope, c.icept, c.wantFlattened)
			}
		})
	}
}

// TestPlattMatchesGonum: the Newton fit reaches the optimum a general
// quasi-Newton optimizer (gonum BFGS) finds for the same objective.
func TestPlattMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 2000
	scores, labels := make([]float64, n), make([]bool, n)
	for i := range scores {
		scores[i] = rng.Float64()
		labels[i] = rng.Float64() < sigmoid(3*(scores[i]-0.7))
	}
	p, fit, err := FitPlatt(scores, labels, FeatureLogit)
	if err != nil || !fit.Converged {
		t.Fatalf("fit %+v: %v", fit, err)
	}
	var nPos, nNeg float64
	for _, l := range labels {
		if l {
			nPos++
		} else {
			nNeg++
		}
	}
	x, tg := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = feature(FeatureLogit, scores[i])
		tg[i] = 1 / (nNeg + 2)
		if labels[i] {
			tg[i] = (nPos + 1) / (nPos + 2)
		}
	}
	prob := optimize.Problem{
		Func: func(v []float64) float64 { return plattLoss(x, tg, -v[0], -v[1]) },
		Grad: func(g, v []float64) {
			g[0], g[1] = 0, 0
			for i, xi := range x {
				d := sigmoid(v[0]*xi+v[1]) - tg[i]
				g[0] += d * xi
				g[1] += d
			}
		},
	}
	res, err := optimize.Minimize(prob, []float64{0, 0}, &optimize.Settings{GradientThreshold: 1e-6}, &optimize.BFGS{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Slope, res.X[0], 1e-5) || !near(p.Intercept, res.X[1], 1e-5) {
		t.Errorf("newton %v %v, gonum BFGS %v", p.Slope, p.Intercept, res.X)
	}
}

func TestECEAndBrier(t *testing.T) {
	probs := []float64{0.1, 0.2, 0.3, 0.9}
	labels := bools("0011")
	// Equal width, 2 bins: {.1,.2,.3} mean .2 vs 1/3, {.9} vs 1:
	// (3·(1/3 − .2) + 1·.1)/4 = 0.125.
	if got := ECE(probs, labels, 2, EqualWidth); !near(got, 0.125, 1e-12) {
		t.Errorf("equal-width ECE %v, want 0.125", got)
	}
	// Equal mass, 2 bins: {.1,.2} mean .15 vs 0, {.3,.9} mean .6 vs 1:
	// (2·.15 + 2·.4)/4 = 0.275.
	if got := ECE(probs, labels, 2, EqualMass); !near(got, 0.275, 1e-12) {
		t.Errorf("equal-mass ECE %v, want 0.275", got)
	}
	// (.01 + .04 + .49 + .01)/4.
	if got := Brier(probs, labels); !near(got, 0.1375, 1e-12) {
		t.Errorf("Brier %v, want 0.1375", got)
	}
	// Ties never straddle an equal-mass edge.
	bins := ReliabilityBins([]float64{0.5, 0.5, 0.5, 0.9}, bools("0101"), 2, EqualMass)
	if len(bins) != 2 || bins[0].Count != 3 || bins[1].Count != 1 {
		t.Errorf("tied equal-mass bins %+v, want counts 3 and 1", bins)
	}
	// 1.0 falls in the last equal-width bin; a perfect predictor has ECE 0.
	if got := ECE([]float64{0, 1}, bools("01"), 10, EqualWidth); got != 0 {
		t.Errorf("perfect ECE %v", got)
	}
}

func toyPairs() []Pair {
	// Deterministic, overlapping classes, three groups of different sizes.
	var pairs []Pair
	for i := range 90 {
		s := float64((i*37)%100) / 100
		pairs = append(pairs, Pair{Score: s, Label: (i*53)%100 < int(s*90), Group: string(rune('a' + i%3))})
	}
	return pairs
}

// TestLeaveOneGroupOutIsHonest: a held-out group's probabilities and
// threshold do not depend on its own labels.
func TestLeaveOneGroupOutIsHonest(t *testing.T) {
	for _, m := range []Method{MethodPlatt, MethodIsotonic, MethodIdentity} {
		cfg := DefaultConfig()
		cfg.Method = m
		pairs := toyPairs()
		ev, err := LeaveOneGroupOut(pairs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		flipped := slices.Clone(pairs)
		for i := range flipped {
			if flipped[i].Group == "a" {
				flipped[i].Label = !flipped[i].Label
			}
		}
		ev2, err := LeaveOneGroupOut(flipped, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range pairs {
			if p.Group == "a" && ev.Probs[i] != ev2.Probs[i] {
				t.Fatalf("%s: held-out prob of pair %d changed with its own group's labels", m, i)
			}
		}
		if ev.Folds[0].Group != "a" || ev.Folds[0].Threshold != ev2.Folds[0].Threshold {
			t.Fatalf("%s: fold a threshold %v vs %v", m, ev.Folds[0].Threshold, ev2.Folds[0].Threshold)
		}
		// Pooled counts add up over folds.
		n, pos := 0, 0
		for _, f := range ev.Folds {
			n += f.Pairs
			pos += f.Positives
		}
		if n != len(pairs) || ev.HeldOut.Pairs != n || ev.HeldOut.Positives != pos {
			t.Fatalf("%s: folds cover %d pairs %d positives; held-out %+v", m, n, pos, ev.HeldOut)
		}
	}
	one := []Pair{{Score: 0.1, Group: "x"}, {Score: 0.9, Label: true, Group: "x"}}
	if _, err := LeaveOneGroupOut(one, DefaultConfig()); err == nil || !strings.Contains(err.Error(), "2 groups") {
		t.Errorf("one group: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Config{Method: "svm", Input: "logits", Rule: Rule{Kind: "best"}, Bins: 0}
	err := bad.Validate()
	for _, want := range []string{"svm", "logits", "best", "bins 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
	c := DefaultConfig()
	c.Input = InputReal
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "logit") {
		t.Errorf("logit feature with real input: %v", err)
	}
	if _, err := Fit([]Pair{{Score: 1.5}}, DefaultConfig()); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
		t.Errorf("probability input 1.5: %v", err)
	}
	if _, err := Fit(nil, DefaultConfig()); err == nil {
		t.Error("no pairs: no error")
	}
}
