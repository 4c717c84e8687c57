package calibrate

import (
	"cmp"
	"slices"
)

// Point is the confusion matrix of keeping every score >= Threshold.
type Point struct {
	Threshold      float64
	TP, FP, FN, TN int
	// Precision is TP/(TP+FP); a Point always keeps at least one pair.
	Precision float64
	// Recall (= TPR) is TP/(TP+FN), 0 when there are no positives.
	Recall float64
	F1     float64
	// Kept is the fraction of all pairs kept.
	Kept float64
	// FPR is FP/(FP+TN), 0 when there are no negatives.
	FPR float64
}

// Sweep returns one Point per distinct score, highest threshold first.
// Equal scores are kept or dropped together (a threshold cannot split
// them), so ties produce a single point. Keeping nothing is not a point:
// its precision is undefined.
func Sweep(scores []float64, labels []bool) []Point {
	idx := make([]int, len(scores))
	pos := 0
	for i := range idx {
		idx[i] = i
		if labels[i] {
			pos++
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	neg := len(scores) - pos
	var out []Point
	tp, fp := 0, 0
	for i, j := range idx {
		if labels[j] {
			tp++
		} else {
			fp++
		}
		if i+1 < len(idx) && scores[idx[i+1]] == scores[j] {
			continue
		}
		out = append(out, point(scores[j], tp, fp, pos, neg))
	}
	return out
}

func point(t float64, tp, fp, pos, neg int) Point {
	p := Point{Threshold: t, TP: tp, FP: fp, FN: pos - tp, TN: neg - fp}
	p.Precision = ratio(tp, tp+fp)
	p.Recall = ratio(tp, pos)
	p.F1 = ratio(2*tp, 2*tp+fp+p.FN)
	p.Kept = ratio(tp+fp, pos+neg)
	p.FPR = ratio(fp, neg)
	return p
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Choose applies the rule to a Sweep's points (highest threshold first).
// ok is false when there are no points, or when a precision target is not
// reached; the point returned then has the highest precision (the lowest
// threshold among equals), the closest the data allows. RuleManual chooses
// nothing.
func (r Rule) Choose(points []Point) (p Point, ok bool) {
	if len(points) == 0 {
		return Point{}, false
	}
	switch r.Kind {
	case RuleMaxF1:
		return argmax(points, func(p Point) float64 { return p.F1 }), true
	case RuleYouden:
		return argmax(points, func(p Point) float64 { return p.Recall - p.FPR }), true
	case RulePrecision:
		// The lowest threshold that still reaches the target keeps the most.
		for i := len(points) - 1; i >= 0; i-- {
			if points[i].Precision >= r.Target {
				return points[i], true
			}
		}
		best := points[0]
		for _, q := range points[1:] {
			if q.Precision >= best.Precision {
				best = q
			}
		}
		return best, false
	}
	return Point{}, false
}

// argmax returns the first (highest-threshold, most conservative) point
// with the largest value.
func argmax(points []Point, value func(Point) float64) Point {
	best := points[0]
	for _, p := range points[1:] {
		if value(p) > value(best) {
			best = p
		}
	}
	return best
}

// PointAt is the confusion matrix of keeping scores >= t; unlike Sweep's
// points it may keep nothing (Precision 0 then). It judges a threshold
// chosen elsewhere.
func PointAt(scores []float64, labels []bool, t float64) Point {
	tp, fp, pos := 0, 0, 0
	for i, s := range scores {
		if labels[i] {
			pos++
		}
		if s >= t {
			if labels[i] {
				tp++
			} else {
				fp++
			}
		}
	}
	return point(t, tp, fp, pos, len(scores)-pos)
}
