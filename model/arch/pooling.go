package arch

import (
	"fmt"
	"math"
)

// PoolMode is how a bi-encoder turns its hidden states into one vector,
// as sentence-transformers' Pooling module (1_Pooling/config.json) names it.
type PoolMode string

// Pool modes computed for encoders.
const (
	// PoolCLS takes the first token's hidden state (pooling_mode_cls_token;
	// BAAI/bge-m3's dense vector).
	PoolCLS PoolMode = "cls"
	// PoolMean averages the real tokens (pooling_mode_mean_tokens).
	PoolMean PoolMode = "mean"
	// PoolMax takes each component's maximum over the real tokens
	// (pooling_mode_max_tokens).
	PoolMax PoolMode = "max"
)

// Pooling is an embedding model's pooling and whether a Normalize module
// (2_Normalize) follows it.
type Pooling struct {
	Mode      PoolMode
	Normalize bool
}

// Validate reports an unknown mode.
func (p Pooling) Validate() error {
	switch p.Mode {
	case PoolCLS, PoolMean, PoolMax:
		return nil
	}
	return fmt.Errorf("pooling mode %q: want %s, %s or %s", p.Mode, PoolCLS, PoolMean, PoolMax)
}

// Pool returns the pooled (and, with Normalize, L2-normalised) vector of
// one sequence's hidden states, every row a real token (padding already
// dropped), accumulating in float64. sentence-transformers masks padding
// the same way: mean divides by the real tokens, max ignores padded rows.
func (p Pooling) Pool(rows [][]float32) ([]float32, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("pool: no tokens")
	}
	var out []float32
	switch p.Mode {
	case PoolCLS:
		out = append([]float32(nil), rows[0]...)
	case PoolMean:
		sum := make([]float64, len(rows[0]))
		for _, r := range rows {
			for i, v := range r {
				sum[i] += float64(v)
			}
		}
		out = make([]float32, len(sum))
		for i, s := range sum {
			out[i] = float32(s / float64(len(rows)))
		}
	case PoolMax:
		out = append([]float32(nil), rows[0]...)
		for _, r := range rows[1:] {
			for i, v := range r {
				out[i] = max(out[i], v)
			}
		}
	}
	if !p.Normalize {
		return out, nil
	}
	var ss float64
	for _, v := range out {
		ss += float64(v) * float64(v)
	}
	// torch.nn.functional.normalize divides by max(norm, 1e-12).
	n := max(math.Sqrt(ss), 1e-12)
	for i, v := range out {
		out[i] = float32(float64(v) / n)
	}
	return out, nil
}
