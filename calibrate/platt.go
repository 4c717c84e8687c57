package calibrate

import (
	"errors"
	"fmt"
	"math"
)

// logitEps bounds probabilities before logit: a neural score of exactly 0
// or 1 (float64 saturates past about ±37 logits) must not become ±Inf.
// Scores beyond 1e-12 of either end tie; nothing useful is that certain.
const logitEps = 1e-12

// Platt is a fitted sigmoid: p = sigmoid(Slope·x + Intercept), x the
// Feature of the score.
type Platt struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	Feature   Feature `json:"feature"`
}

// PlattFit reports how the fit went.
type PlattFit struct {
	Iterations int
	// Converged is false when the line search stalled before the gradient
	// vanished; the parameters are still the best found.
	Converged bool
	// Flattened is true when the best slope was negative and the fit was
	// replaced by the constant one to stay monotone.
	Flattened bool
}

// feature maps a score to Platt's regressor.
func feature(f Feature, score float64) float64 {
	if f != FeatureLogit {
		return score
	}
	p := min(max(score, logitEps), 1-logitEps)
	return math.Log(p / (1 - p))
}

// sigmoid is 1/(1+e^-z) without overflow; ±Inf give exactly 1 and 0.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Prob calibrates a finite score.
func (p Platt) Prob(score float64) float64 {
	if p.Slope == 0 { // 0·Inf would be NaN
		return sigmoid(p.Intercept)
	}
	return sigmoid(p.Slope*feature(p.Feature, score) + p.Intercept)
}

// Newton settings of Lin, Lin and Weng (2007), Algorithm 1.
const (
	plattMaxIter = 100
	plattMinStep = 1e-10
	plattSigma   = 1e-12 // keeps the Hessian positive definite
	plattEps     = 1e-5  // gradient norm at which the fit stops
)

// FitPlatt fits Platt scaling by maximum likelihood with Platt's smoothed
// targets (see doc.go for the method and its citation).
func FitPlatt(scores []float64, labels []bool, f Feature) (Platt, PlattFit, error) {
	if len(scores) == 0 || len(scores) != len(labels) {
		return Platt{}, PlattFit{}, fmt.Errorf("calibrate: platt: %d scores, %d labels", len(scores), len(labels))
	}
	x := make([]float64, len(scores))
	t := make([]float64, len(scores))
	var nPos, nNeg float64
	for i, s := range scores {
		if x[i] = feature(f, s); math.IsNaN(x[i]) || math.IsInf(x[i], 0) {
			return Platt{}, PlattFit{}, errors.New("calibrate: platt: non-finite score")
		}
		if labels[i] {
			nPos++
		} else {
			nNeg++
		}
	}
	hi, lo := (nPos+1)/(nPos+2), 1/(nNeg+2)
	for i := range t {
		if labels[i] {
			t[i] = hi
		} else {
			t[i] = lo
		}
	}
	// Lin et al.'s sign convention: p = 1/(1+exp(a·x+b)), so a = -Slope.
	a, b := 0.0, math.Log((nNeg+1)/(nPos+1))
	fval := plattLoss(x, t, a, b)
	var fit PlattFit
	for fit.Iterations = 0; fit.Iterations < plattMaxIter; fit.Iterations++ {
		h11, h22, h21, g1, g2 := plattSigma, plattSigma, 0.0, 0.0, 0.0
		for i, xi := range x {
			z := xi*a + b
			var p, q float64 // p = 1/(1+e^z), q = 1-p, computed without overflow
			if z >= 0 {
				e := math.Exp(-z)
				p, q = e/(1+e), 1/(1+e)
			} else {
				e := math.Exp(z)
				p, q = 1/(1+e), e/(1+e)
			}
			d2 := p * q
			h11 += xi * xi * d2
			h22 += d2
			h21 += xi * d2
			d1 := t[i] - p
			g1 += xi * d1
			g2 += d1
		}
		if math.Abs(g1) < plattEps && math.Abs(g2) < plattEps {
			fit.Converged = true
			break
		}
		det := h11*h22 - h21*h21
		da := -(h22*g1 - h21*g2) / det
		db := -(-h21*g1 + h11*g2) / det
		gd := g1*da + g2*db
		step := 1.0
		for ; step >= plattMinStep; step /= 2 {
			na, nb := a+step*da, b+step*db
			if nf := plattLoss(x, t, na, nb); nf < fval+1e-4*step*gd {
				a, b, fval = na, nb, nf
				break
			}
		}
		if step < plattMinStep {
			break // no decrease along the Newton direction: at the optimum up to rounding
		}
	}
	p := Platt{Slope: -a, Intercept: -b, Feature: f}
	if p.Slope < 0 {
		// The constant fit's optimum is the mean smoothed target.
		mean := (nPos*hi + nNeg*lo) / (nPos + nNeg)
		p.Slope, p.Intercept, fit.Flattened = 0, math.Log(mean/(1-mean)), true
	}
	if math.IsNaN(p.Slope) || math.IsNaN(p.Intercept) || math.IsInf(p.Slope, 0) || math.IsInf(p.Intercept, 0) {
		return Platt{}, fit, errors.New("calibrate: platt: fit diverged")
	}
	return p, fit, nil
}

// plattLoss is the negative log-likelihood with targets t, written so that
// no exponential overflows.
func plattLoss(x, t []float64, a, b float64) float64 {
	var f float64
	for i, xi := range x {
		z := xi*a + b
		if z >= 0 {
			f += t[i]*z + math.Log1p(math.Exp(-z))
		} else {
			f += (t[i]-1)*z + math.Log1p(math.Exp(z))
		}
	}
	return f
}
