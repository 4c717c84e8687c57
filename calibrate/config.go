package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Method maps scores to probabilities.
type Method string

// Methods.
const (
	MethodPlatt    Method = "platt"
	MethodIsotonic Method = "isotonic"
	MethodIdentity Method = "identity"
)

// ParseMethod checks a method name.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case MethodPlatt, MethodIsotonic, MethodIdentity:
		return m, nil
	}
	return "", fmt.Errorf("method %q: want platt, isotonic or identity", s)
}

// Input is the scale of the scores a Calibration takes.
type Input string

// Input scales (see doc.go).
const (
	InputProbability Input = "probability" // a backend's relevance_score, in [0, 1]
	InputReal        Input = "real"        // any finite score, e.g. raw BM25
)

// Feature is what Platt's logistic regression is fitted on.
type Feature string

// Platt features.
const (
	FeatureLogit Feature = "logit" // logit(score); probability inputs only
	FeatureScore Feature = "score" // the score itself
)

// RuleKind names a way of choosing a threshold.
type RuleKind string

// Rule kinds.
const (
	RuleMaxF1     RuleKind = "maxf1"
	RulePrecision RuleKind = "precision"
	RuleYouden    RuleKind = "youden"
	// RuleManual marks a threshold set by hand in the file; it cannot
	// choose one.
	RuleManual RuleKind = "manual"
)

// Rule chooses a threshold from a Sweep.
type Rule struct {
	Kind RuleKind
	// Target is the precision RulePrecision must reach, in (0, 1].
	Target float64
}

// ParseRule reads "maxf1", "youden", "manual" or "precision:T".
func ParseRule(s string) (Rule, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch RuleKind(kind) {
	case RuleMaxF1, RuleYouden, RuleManual:
		if hasArg {
			return Rule{}, fmt.Errorf("rule %q: %s takes no argument", s, kind)
		}
		return Rule{Kind: RuleKind(kind)}, nil
	case RulePrecision:
		t, err := strconv.ParseFloat(arg, 64)
		if !hasArg || err != nil || !(t > 0 && t <= 1) {
			return Rule{}, fmt.Errorf("rule %q: want precision:T with T in (0, 1], e.g. precision:0.8", s)
		}
		return Rule{Kind: RulePrecision, Target: t}, nil
	}
	return Rule{}, fmt.Errorf("rule %q: want maxf1, youden or precision:T", s)
}

// String is ParseRule's inverse.
func (r Rule) String() string {
	if r.Kind == RulePrecision {
		return "precision:" + strconv.FormatFloat(r.Target, 'g', -1, 64)
	}
	return string(r.Kind)
}

// Binning says how ECE and reliability diagrams group probabilities.
type Binning int

// Binnings (see doc.go).
const (
	EqualWidth Binning = iota
	EqualMass
)

func (b Binning) String() string {
	if b == EqualMass {
		return "equal-mass"
	}
	return "equal-width"
}

// Config says how to fit and judge a calibration. The zero value is not
// valid; start from DefaultConfig.
type Config struct {
	// Method maps scores to probabilities. Default platt.
	Method Method

	// Input is the scale of Pair.Score and of what the fitted Calibration's
	// Apply takes. Default probability.
	Input Input

	// Feature is Platt's regressor: logit(score) (default; probability
	// inputs only) or the score itself (the only choice for real inputs).
	// Ignored by the other methods.
	Feature Feature

	// Rule chooses the threshold on calibrated probabilities. Default
	// maxf1. RuleManual is not allowed here: it chooses nothing.
	Rule Rule

	// Bins is the number of bins for ECE and reliability diagrams, in
	// [1, 1000]. Default 10.
	Bins int
}

// DefaultConfig returns Platt on logit(score), max-F1 threshold, 10 bins.
func DefaultConfig() Config {
	return Config{Method: MethodPlatt, Input: InputProbability, Feature: FeatureLogit, Rule: Rule{Kind: RuleMaxF1}, Bins: 10}
}

// Validate reports every problem at once, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("calibrate: "+format, a...)) }
	if _, err := ParseMethod(string(c.Method)); err != nil {
		bad("%v", err)
	}
	switch c.Input {
	case InputProbability, InputReal:
	default:
		bad("input %q: want probability or real", c.Input)
	}
	if c.Method == MethodPlatt {
		switch {
		case c.Feature != FeatureLogit && c.Feature != FeatureScore:
			bad("feature %q: want logit or score", c.Feature)
		case c.Feature == FeatureLogit && c.Input == InputReal:
			bad("feature logit needs probability input (real scores have no logit); use feature score")
		}
	}
	if c.Method == MethodIdentity && c.Input == InputReal {
		bad("method identity needs probability input: real scores are not probabilities")
	}
	switch c.Rule.Kind {
	case RuleMaxF1, RuleYouden:
	case RulePrecision:
		if !(c.Rule.Target > 0 && c.Rule.Target <= 1) {
			bad("rule precision target %v: want (0, 1]", c.Rule.Target)
		}
	default:
		bad("rule %q: want maxf1, youden or precision", c.Rule.Kind)
	}
	if c.Bins < 1 || c.Bins > 1000 {
		bad("bins %d: want [1, 1000]", c.Bins)
	}
	return errors.Join(errs...)
}

// Pair is one scored candidate with its judgment.
type Pair struct {
	Score float64 // the pipeline's score, on the Config's Input scale
	Label bool    // relevant
	Group string  // held out together by LeaveOneGroupOut (a conversation)
}

// Scores returns the pairs' scores.
func Scores(pairs []Pair) []float64 {
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		out[i] = p.Score
	}
	return out
}

// Labels returns the pairs' labels.
func Labels(pairs []Pair) []bool {
	out := make([]bool, len(pairs))
	for i, p := range pairs {
		out[i] = p.Label
	}
	return out
}

// checkPairs rejects what no method can fit: no pairs, or scores that are
// not finite or outside the input scale. The first few bad pairs are named.
func checkPairs(pairs []Pair, in Input) error {
	if len(pairs) == 0 {
		return errors.New("calibrate: no pairs")
	}
	var errs []error
	for i, p := range pairs {
		switch {
		case math.IsNaN(p.Score) || math.IsInf(p.Score, 0):
			errs = append(errs, fmt.Errorf("pair %d: score %v is not finite", i, p.Score))
		case in == InputProbability && (p.Score < 0 || p.Score > 1):
			errs = append(errs, fmt.Errorf("pair %d: score %v outside [0, 1] with probability input (use real input)", i, p.Score))
		}
		if len(errs) == 5 {
			errs = append(errs, errors.New("(further pairs not checked)"))
			break
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("calibrate: %w", errors.Join(errs...))
	}
	return nil
}
