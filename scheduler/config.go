package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
)

// Config sets the scheduler's bounds. The zero value is invalid; start from
// DefaultConfig.
type Config struct {
	// QueueSize bounds the pairs waiting for the engine, across all
	// requests. A request whose pairs do not all fit is refused with
	// ErrOverloaded; one with more pairs than QueueSize with ErrTooLarge.
	// The queue is allocated once at this size (about 48 bytes a pair).
	QueueSize int
	// BatchTokens bounds one engine call in the tokens the engine computes
	// (Coster; rows × longest row for an engine that pads). A single pair
	// longer than this still runs, alone.
	BatchTokens int
	// MaxBatch bounds the rows of one engine call.
	MaxBatch int
	// MaxWait is how long an idle engine waits, counted from the arrival of
	// the oldest waiting pair, for a batch to fill. A full batch (MaxBatch
	// rows, or no room in BatchTokens for one more row) never waits. 0
	// means never wait.
	MaxWait time.Duration
	// Workers is the number of concurrent engine calls. Keep 1 on CPU: ONNX
	// Runtime already spreads one call over every core.
	Workers int
	// MaxPadRatio stops a batch from growing once its computed tokens would
	// exceed MaxPadRatio × real tokens, so that on an engine that pads,
	// pairs of very different lengths run apart rather than pay for
	// padding. 1 allows no padding at all (only equal lengths batch
	// together). On CPU, padding is pure wasted compute, so keep it low; on
	// a GPU a larger value trades padding for fewer, fuller calls. An engine
	// that packs rows computes no more than the real tokens, so this never
	// splits its batches.
	MaxPadRatio float64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		QueueSize:   4096,
		BatchTokens: 8192,
		MaxBatch:    32,
		MaxWait:     2 * time.Millisecond,
		Workers:     1,
		MaxPadRatio: batching.DefaultMaxPadRatio,
	}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("queue size %d: want >= 1", c.QueueSize))
	}
	if c.BatchTokens < 1 {
		errs = append(errs, fmt.Errorf("batch tokens %d: want >= 1", c.BatchTokens))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max batch %d: want >= 1", c.MaxBatch))
	}
	if c.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("max wait %v: want >= 0", c.MaxWait))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers %d: want >= 1", c.Workers))
	}
	if !(c.MaxPadRatio >= 1) { // also refuses NaN
		errs = append(errs, fmt.Errorf("max pad ratio %v: want >= 1", c.MaxPadRatio))
	}
	return errors.Join(errs...)
}
