package scoring

import (
	"context"
	"fmt"

	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/rerank"
)

// Calibrated wraps a Backend so that every score it returns is the
// calibrated probability of a calibration file (eval calibrate): /rerank's
// relevance_score and memory search's "rerank" score alike. Logits (raw
// scores) are left as the model gave them.
type Calibrated struct {
	Backend
	cal *calibrate.Calibration
}

// NewCalibrated wraps b. The calibration must take the backend's own
// probability scale; one fitted on raw scores (input "real", e.g. raw BM25)
// cannot be applied to served scores and is refused.
func NewCalibrated(b Backend, cal *calibrate.Calibration) (*Calibrated, error) {
	if err := cal.Validate(); err != nil {
		return nil, err
	}
	if cal.Input != calibrate.InputProbability {
		return nil, fmt.Errorf("calibration input is %q: the server calibrates the scores it serves, so fit it with input %q (eval calibrate without --score raw)",
			cal.Input, calibrate.InputProbability)
	}
	return &Calibrated{Backend: b, cal: cal}, nil
}

// Calibration returns the loaded calibration.
func (c *Calibrated) Calibration() *calibrate.Calibration { return c.cal }

// Score implements Backend.
func (c *Calibrated) Score(ctx context.Context, r rerank.Request) (Scored, error) {
	out, err := c.Backend.Score(ctx, r)
	if err != nil {
		return out, err
	}
	scores := make([]rerank.Score, len(out.Scores))
	for i, s := range out.Scores {
		s.Score = c.cal.Apply(s.Score)
		scores[i] = s
	}
	out.Scores = scores
	return out, nil
}

// DefaultThreshold is the threshold applied when a request sends none:
// the calibration's, if b is calibrated (nil otherwise).
func DefaultThreshold(b Backend) *float64 {
	if c, ok := b.(*Calibrated); ok {
		t := c.cal.Threshold
		return &t
	}
	return nil
}
