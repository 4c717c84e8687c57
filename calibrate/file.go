package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/rerankd/rerankd/internal/atomicfile"
)

// Version is the calibration file format this package reads and writes.
const Version = 1

// maxFileSize bounds Load: a real file is a few KB (isotonic knots at most
// two per distinct score).
const maxFileSize = 64 << 20

// Calibration is a fitted score-to-probability map and its threshold: the
// calibration file's content.
type Calibration struct {
	Version int    `json:"version"`
	Method  Method `json:"method"`
	// Input is the scale Apply takes (see doc.go).
	Input Input `json:"input"`
	// Platt is set exactly when Method is platt, Isotonic when isotonic.
	Platt    *Platt    `json:"platt,omitempty"`
	Isotonic *Isotonic `json:"isotonic,omitempty"`
	// Threshold is on calibrated probabilities: keep Apply(score) >=
	// Threshold. Rule is what chose it ("manual" if set by hand).
	Threshold float64 `json:"threshold"`
	Rule      string  `json:"rule"`
	Source    Source  `json:"source"`
	// HeldOut is the expected quality (leave one group out); InSample the
	// same metrics on the fitting data, optimistic, for comparison.
	HeldOut  *Metrics `json:"held_out,omitempty"`
	InSample *Metrics `json:"in_sample,omitempty"`
	// Notes say what the fit had to give up, if anything.
	Notes []string `json:"notes,omitempty"`
}

// Source says where a calibration's pairs came from.
type Source struct {
	// Pipeline that scored the pairs: "bm25", or "run" for a TREC run file.
	Pipeline string `json:"pipeline"`
	// Data is the input path(s), as given.
	Data string `json:"data"`
	// Unit and Depth describe LoCoMo pairs: the retrieval unit and the
	// candidates kept per question.
	Unit  string `json:"unit,omitempty"`
	Depth int    `json:"depth,omitempty"`
	// Pairs, Positives and Groups count the fitting data.
	Pairs     int `json:"pairs"`
	Positives int `json:"positives"`
	Groups    int `json:"groups"`
	// Created is passed in by the caller (tests pin it).
	Created time.Time `json:"created"`
	// Tool names the program and version that wrote the file.
	Tool string `json:"tool"`
	// Model identifies the scorer whose scores were fitted, as /info's
	// model reports it; rerankd serve refuses the file for another model.
	// Empty in files written before it was recorded (accepted, with a
	// warning).
	Model string `json:"model,omitempty"`
}

// CheckModel refuses c for a scorer other than the one it was fitted on.
func (c *Calibration) CheckModel(model string) error {
	if c.Source.Model != "" && c.Source.Model != model {
		return fmt.Errorf("fitted on the scores of model %q, not of the model served (%q): scores of another model have another scale; fit one for this model with eval calibrate", c.Source.Model, model)
	}
	return nil
}

// Apply maps a score on the Input scale to a calibrated probability. It is
// non-decreasing in score and always in [0, 1]. Probability inputs are
// clamped to [0, 1] first; ±Inf act as the largest and smallest scores; NaN
// gives 0, the least relevant (the server never emits NaN scores, so this
// only keeps a bad score from passing a threshold). c must be valid (as
// Fit, Calibrate and Parse return it).
func (c *Calibration) Apply(score float64) float64 {
	if math.IsNaN(score) {
		return 0
	}
	if c.Input == InputProbability {
		score = min(max(score, 0), 1)
	}
	p := score
	switch c.Method {
	case MethodPlatt:
		p = c.Platt.Prob(score)
	case MethodIsotonic:
		p = c.Isotonic.Prob(score)
	}
	if math.IsNaN(p) {
		return 0
	}
	return min(max(p, 0), 1)
}

// ApplyAll applies c to each score.
func (c *Calibration) ApplyAll(scores []float64) []float64 {
	out := make([]float64, len(scores))
	for i, s := range scores {
		out[i] = c.Apply(s)
	}
	return out
}

// Keep reports whether a score passes the threshold.
func (c *Calibration) Keep(score float64) bool { return c.Apply(score) >= c.Threshold }

// Validate reports every problem at once, joined with errors.Join.
func (c *Calibration) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Version != Version {
		bad("version %d: this build reads version %d", c.Version, Version)
	}
	if _, err := ParseMethod(string(c.Method)); err != nil {
		bad("%v", err)
	}
	if c.Input != InputProbability && c.Input != InputReal {
		bad("input %q: want probability or real", c.Input)
	}
	if (c.Platt != nil) != (c.Method == MethodPlatt) {
		bad("field platt must be present exactly when method is platt")
	}
	if (c.Isotonic != nil) != (c.Method == MethodIsotonic) {
		bad("field isotonic must be present exactly when method is isotonic")
	}
	if c.Method == MethodIdentity && c.Input != InputProbability {
		bad("method identity needs input probability")
	}
	if c.Platt != nil {
		errs = append(errs, c.Platt.validate(c.Input))
	}
	if c.Isotonic != nil {
		errs = append(errs, c.Isotonic.validate())
	}
	if !(c.Threshold >= 0 && c.Threshold <= 1) {
		bad("threshold %v: want a probability in [0, 1]", c.Threshold)
	}
	if _, err := ParseRule(c.Rule); err != nil {
		bad("%v", err)
	}
	if s := c.Source; s.Pairs < 0 || s.Positives < 0 || s.Positives > s.Pairs || s.Groups < 0 || s.Depth < 0 {
		bad("source counts: pairs %d, positives %d, groups %d, depth %d: want 0 <= positives <= pairs, groups and depth >= 0",
			s.Pairs, s.Positives, s.Groups, s.Depth)
	}
	for name, m := range map[string]*Metrics{"held_out": c.HeldOut, "in_sample": c.InSample} {
		if m != nil {
			if err := m.validate(); err != nil {
				bad("%s: %v", name, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (p *Platt) validate(in Input) error {
	var errs []error
	if math.IsNaN(p.Slope) || math.IsInf(p.Slope, 0) || p.Slope < 0 {
		errs = append(errs, fmt.Errorf("platt slope %v: want finite and >= 0 (a negative slope is not monotone)", p.Slope))
	}
	if math.IsNaN(p.Intercept) || math.IsInf(p.Intercept, 0) {
		errs = append(errs, fmt.Errorf("platt intercept %v: want finite", p.Intercept))
	}
	switch {
	case p.Feature != FeatureLogit && p.Feature != FeatureScore:
		errs = append(errs, fmt.Errorf("platt feature %q: want logit or score", p.Feature))
	case p.Feature == FeatureLogit && in != InputProbability:
		errs = append(errs, errors.New("platt feature logit needs input probability"))
	}
	return errors.Join(errs...)
}

func (m *Isotonic) validate() error {
	if len(m.X) == 0 || len(m.X) != len(m.Y) {
		return fmt.Errorf("isotonic: %d x and %d y knots: want the same number, at least 1", len(m.X), len(m.Y))
	}
	for i := range m.X {
		x, y := m.X[i], m.Y[i]
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("isotonic knot %d: x %v is not finite", i, x)
		case !(y >= 0 && y <= 1):
			return fmt.Errorf("isotonic knot %d: y %v outside [0, 1]", i, y)
		case i > 0 && x <= m.X[i-1]:
			return fmt.Errorf("isotonic knot %d: x %v not above the previous %v (knots must increase)", i, x, m.X[i-1])
		case i > 0 && y < m.Y[i-1]:
			return fmt.Errorf("isotonic knot %d: y %v below the previous %v (not monotone)", i, y, m.Y[i-1])
		}
	}
	return nil
}

// Degenerate reports a fit that maps every score to one probability
// (Platt slope 0, isotonic knots all equal): the scores it was fitted on
// did not tell relevant from irrelevant, and applying it would make every
// result tie. rerankd serve refuses such a file; eval calibrate flags it.
func (c *Calibration) Degenerate() error {
	switch {
	case c.Platt != nil && c.Platt.Slope == 0:
		return fmt.Errorf("degenerate fit: platt slope 0 gives every score the probability %.4g", c.Platt.Prob(0))
	case c.Isotonic != nil && len(c.Isotonic.Y) > 0 && c.Isotonic.Y[0] == c.Isotonic.Y[len(c.Isotonic.Y)-1]:
		return fmt.Errorf("degenerate fit: every isotonic knot maps to %.4g", c.Isotonic.Y[0])
	}
	return nil
}

func (m *Metrics) validate() error {
	for _, v := range []float64{m.Precision, m.Recall, m.F1, m.Kept, m.ECE, m.ECEMass, m.Brier} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("rate %v outside [0, 1]", v)
		}
	}
	if m.Pairs < 0 || m.Positives < 0 || m.Positives > m.Pairs || m.Bins < 0 {
		return fmt.Errorf("counts pairs %d, positives %d, bins %d", m.Pairs, m.Positives, m.Bins)
	}
	return nil
}

// Parse reads a calibration file strictly: unknown fields, trailing data,
// other versions and invalid values are errors.
func Parse(data []byte) (*Calibration, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	// The version is checked first so that a newer file says so, rather
	// than failing on a field this build does not know.
	switch {
	case head.Version == nil:
		return nil, errors.New("calibration: no version field")
	case *head.Version != Version:
		return nil, fmt.Errorf("calibration: version %d: this build reads version %d", *head.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("calibration: data after the JSON object")
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return &c, nil
}

// Load reads and parses a calibration file.
func Load(path string) (*Calibration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Marshal validates c and returns its file form (indented JSON).
func (c *Calibration) Marshal() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Save writes c to path atomically (atomicfile.WriteFile: a temporary
// file in the same folder, fsynced, renamed over path, the folder
// fsynced), so a reader (or a crash) never sees half a file.
func (c *Calibration) Save(path string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}
