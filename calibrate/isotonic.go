package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Isotonic is a fitted non-decreasing map given by knots: X strictly
// increasing, Y non-decreasing in [0, 1]. Between knots it is linear;
// outside them it is constant.
type Isotonic struct {
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
}

// block is a run of pooled scores: its range and label sum.
type block struct {
	lo, hi   float64
	pos, cnt float64
}

func (b block) mean() float64 { return b.pos / b.cnt }

// FitIsotonic fits isotonic regression by pool adjacent violators. Equal
// scores are pooled first, so they always get one value.
func FitIsotonic(scores []float64, labels []bool) (Isotonic, error) {
	if len(scores) == 0 || len(scores) != len(labels) {
		return Isotonic{}, fmt.Errorf("calibrate: isotonic: %d scores, %d labels", len(scores), len(labels))
	}
	idx := make([]int, len(scores))
	for i := range idx {
		if math.IsNaN(scores[i]) || math.IsInf(scores[i], 0) {
			return Isotonic{}, errors.New("calibrate: isotonic: non-finite score")
		}
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	var stack []block
	for k := 0; k < len(idx); {
		// Equal scores form one block before PAV sees them.
		b := block{lo: scores[idx[k]], hi: scores[idx[k]]}
		for ; k < len(idx) && scores[idx[k]] == b.lo; k++ {
			b.cnt++
			if labels[idx[k]] {
				b.pos++
			}
		}
		stack = append(stack, b)
		// Pool while the last two blocks are out of order. Pooling equal
		// means too changes no fitted value and drops a knot.
		for len(stack) >= 2 {
			n := len(stack)
			a, b := stack[n-2], stack[n-1]
			if a.mean() < b.mean() {
				break
			}
			stack[n-2] = block{lo: a.lo, hi: b.hi, pos: a.pos + b.pos, cnt: a.cnt + b.cnt}
			stack = stack[:n-1]
		}
	}
	var m Isotonic
	for _, b := range stack {
		m.X = append(m.X, b.lo)
		m.Y = append(m.Y, b.mean())
		if b.hi > b.lo {
			m.X = append(m.X, b.hi)
			m.Y = append(m.Y, b.mean())
		}
	}
	return m, nil
}

// Prob calibrates a finite score.
func (m Isotonic) Prob(score float64) float64 {
	n := len(m.X)
	switch {
	case score <= m.X[0]:
		return m.Y[0]
	case score >= m.X[n-1]:
		return m.Y[n-1]
	}
	// X[0] < score < X[n-1]: the first knot >= score is X[i], i >= 1.
	i := sort.SearchFloat64s(m.X, score)
	if m.X[i] == score {
		return m.Y[i]
	}
	w := (score - m.X[i-1]) / (m.X[i] - m.X[i-1])
	y := m.Y[i-1] + w*(m.Y[i]-m.Y[i-1])
	return min(max(y, m.Y[i-1]), m.Y[i]) // rounding must not break monotonicity
}
