package metrics

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrNotPaired is returned for score lists of different lengths or fewer
// than two queries.
var ErrNotPaired = errors.New("significance: want two paired lists of at least two per-query scores")

// Randomization is the two-sided paired randomization (permutation) test
// of trec tools (Smucker, Allan and Carterette, CIKM 2007): under the null
// hypothesis each query's two scores are exchangeable, so each per-query
// difference b[i]-a[i] keeps or flips its sign at random. p is the share
// of the permutations whose absolute mean difference is at least the
// observed one, with the observed labelling counted among them ((k+1) /
// (n+1), so p > 0). The random signs come from seed: the same inputs and
// seed give the same p.
func Randomization(a, b []float64, permutations int, seed uint64) (float64, error) {
	if len(a) != len(b) || len(a) < 2 || permutations < 1 {
		return 0, ErrNotPaired
	}
	d := make([]float64, len(a))
	var obs float64
	for i := range a {
		d[i] = b[i] - a[i]
		obs += d[i]
	}
	obs = math.Abs(obs)
	// Sums, not means: the same comparison, no division. A small slack
	// keeps permutations equal to the observed sum in float rounding on
	// the "at least" side, as exact arithmetic would.
	slack := 1e-12 * (1 + obs)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	hits := 0
	for range permutations {
		var s float64
		for _, x := range d {
			if rng.Uint64()&1 == 1 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-slack {
			hits++
		}
	}
	return float64(hits+1) / float64(permutations+1), nil
}

// PairedT is the two-sided paired t-test of b against a: t is the mean
// per-query difference over its standard error, p from Student's t with
// len(a)-1 degrees of freedom. Identical lists give t 0, p 1; a constant
// non-zero difference gives t ±Inf, p 0.
func PairedT(a, b []float64) (t, p float64, err error) {
	if len(a) != len(b) || len(a) < 2 {
		return 0, 0, ErrNotPaired
	}
	n := float64(len(a))
	var mean float64
	for i := range a {
		mean += b[i] - a[i]
	}
	mean /= n
	var ss float64
	for i := range a {
		x := b[i] - a[i] - mean
		ss += x * x
	}
	se := math.Sqrt(ss / (n - 1) / n)
	switch {
	case se == 0 && mean == 0:
		return 0, 1, nil
	case se == 0:
		return math.Copysign(math.Inf(1), mean), 0, nil
	}
	t = mean / se
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(math.Abs(t))
	return t, p, nil
}
