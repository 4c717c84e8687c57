package calibrate

import (
	"fmt"
	"maps"
	"slices"
)

// Metrics judge calibrated probabilities and a threshold on them.
type Metrics struct {
	Pairs     int `json:"pairs"`
	Positives int `json:"positives"`
	// Precision, Recall, F1 and Kept (fraction of pairs kept) are those of
	// keeping probabilities >= the threshold.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Kept      float64 `json:"kept"`
	// ECE uses Bins equal-width bins, ECEMass Bins equal-mass bins.
	ECE     float64 `json:"ece"`
	ECEMass float64 `json:"ece_mass"`
	Brier   float64 `json:"brier"`
	Bins    int     `json:"bins"`
}

// judge computes Metrics for probabilities whose threshold decisions were
// already counted in pt (pooled over folds, or one threshold).
func judge(probs []float64, labels []bool, pt Point, bins int) Metrics {
	return Metrics{
		Pairs: len(probs), Positives: pt.TP + pt.FN,
		Precision: pt.Precision, Recall: pt.Recall, F1: pt.F1, Kept: pt.Kept,
		ECE: ECE(probs, labels, bins, EqualWidth), ECEMass: ECE(probs, labels, bins, EqualMass),
		Brier: Brier(probs, labels), Bins: bins,
	}
}

// Fit fits cfg.Method on all pairs and chooses the threshold on them by
// cfg.Rule. The result's InSample metrics are judged on the same pairs, so
// they are optimistic; Calibrate adds honest held-out ones.
func Fit(pairs []Pair, cfg Config) (*Calibration, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkPairs(pairs, cfg.Input); err != nil {
		return nil, err
	}
	c, _, err := fit(pairs, cfg)
	return c, err
}

// fit is Fit on checked input; reached reports whether the rule was met.
func fit(pairs []Pair, cfg Config) (c *Calibration, reached bool, err error) {
	scores, labels := Scores(pairs), Labels(pairs)
	c = &Calibration{Version: Version, Method: cfg.Method, Input: cfg.Input, Rule: cfg.Rule.String()}
	switch cfg.Method {
	case MethodPlatt:
		p, info, err := FitPlatt(scores, labels, cfg.Feature)
		if err != nil {
			return nil, false, err
		}
		c.Platt = &p
		if info.Flattened {
			c.Notes = append(c.Notes, "platt: scores are anti-correlated with relevance; the slope was set to 0 to stay monotone")
		}
	case MethodIsotonic:
		m, err := FitIsotonic(scores, labels)
		if err != nil {
			return nil, false, err
		}
		c.Isotonic = &m
	}
	probs := c.ApplyAll(scores)
	pt, ok := cfg.Rule.Choose(Sweep(probs, labels))
	if !ok {
		c.Notes = append(c.Notes, fmt.Sprintf("rule %s not met: the threshold gives the highest precision reached, %.4f", c.Rule, pt.Precision))
	}
	c.Threshold = pt.Threshold
	m := judge(probs, labels, pt, cfg.Bins)
	c.InSample = &m
	c.Source.Pairs, c.Source.Positives = len(pairs), m.Positives
	c.Source.Groups = len(groupIndex(pairs))
	return c, ok, nil
}

// Fold is one held-out group of LeaveOneGroupOut.
type Fold struct {
	Group     string `json:"group"`
	Pairs     int    `json:"pairs"`
	Positives int    `json:"positives"`
	// Threshold was chosen on the other groups; Reached is false when the
	// rule's precision target was not met there.
	Threshold float64 `json:"threshold"`
	Reached   bool    `json:"reached"`
	// Precision, Recall and F1 are on the held-out group at Threshold.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Evaluation is the out-of-sample judgment of a method and rule.
type Evaluation struct {
	Folds []Fold
	// HeldOut pools every fold's held-out decisions and probabilities.
	HeldOut Metrics
	// Probs is each pair's probability from the fit that did not see its
	// group, in the order of the pairs.
	Probs []float64
}

// LeaveOneGroupOut fits and chooses a threshold without each group in turn
// and judges the held-out group only, so no threshold or probability is
// judged on the data that chose it. It needs at least two groups.
func LeaveOneGroupOut(pairs []Pair, cfg Config) (*Evaluation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkPairs(pairs, cfg.Input); err != nil {
		return nil, err
	}
	groups := groupIndex(pairs)
	if len(groups) < 2 {
		return nil, fmt.Errorf("calibrate: leave-one-group-out needs at least 2 groups, got %d", len(groups))
	}
	ev := &Evaluation{Probs: make([]float64, len(pairs))}
	labels := Labels(pairs)
	var pooled Point
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		held := groups[g]
		train := make([]Pair, 0, len(pairs)-len(held))
		for i, p := range pairs {
			if p.Group != g {
				train = append(train, pairs[i])
			}
		}
		c, reached, err := fit(train, cfg)
		if err != nil {
			return nil, fmt.Errorf("without group %q: %w", g, err)
		}
		hs, hl := make([]float64, len(held)), make([]bool, len(held))
		for k, i := range held {
			ev.Probs[i] = c.Apply(pairs[i].Score)
			hs[k], hl[k] = ev.Probs[i], labels[i]
		}
		pt := PointAt(hs, hl, c.Threshold)
		ev.Folds = append(ev.Folds, Fold{Group: g, Pairs: len(held), Positives: pt.TP + pt.FN, Threshold: c.Threshold,
			Reached: reached, Precision: pt.Precision, Recall: pt.Recall, F1: pt.F1})
		pooled.TP += pt.TP
		pooled.FP += pt.FP
		pooled.FN += pt.FN
		pooled.TN += pt.TN
	}
	pooled = point(0, pooled.TP, pooled.FP, pooled.TP+pooled.FN, pooled.FP+pooled.TN)
	ev.HeldOut = judge(ev.Probs, labels, pooled, cfg.Bins)
	return ev, nil
}

// Calibrate fits on all pairs (the Calibration to ship) and evaluates the
// same method and rule leave-one-group-out (its expected quality, stored
// as HeldOut). src describes the data; its counts are filled in.
func Calibrate(pairs []Pair, cfg Config, src Source) (*Calibration, *Evaluation, error) {
	c, err := Fit(pairs, cfg)
	if err != nil {
		return nil, nil, err
	}
	ev, err := LeaveOneGroupOut(pairs, cfg)
	if err != nil {
		return nil, nil, err
	}
	src.Pairs, src.Positives, src.Groups = c.Source.Pairs, c.Source.Positives, c.Source.Groups
	c.Source = src
	c.HeldOut = &ev.HeldOut
	return c, ev, c.Validate()
}

// groupIndex maps each group to the indexes of its pairs.
func groupIndex(pairs []Pair) map[string][]int {
	out := map[string][]int{}
	for i, p := range pairs {
		out[p.Group] = append(out[p.Group], i)
	}
	return out
}
