package ref

import (
	"errors"
	"fmt"
	"math"

	"github.com/rerankd/rerankd/model/arch"
)

// Embedding returns the Qwen3-Embedding vector of one unpadded sequence:
// the final-normed hidden state at its last token (last-token pooling),
// L2-normalised. ids must already end with the end-of-text token the
// embedding tokenizer appends. w may lack an output head (a Qwen3Model
// checkpoint): only the backbone is used.
func Embedding(w *arch.Weights, ids []int) ([]float32, error) {
	if w == nil {
		return nil, errors.New("ref: nil weights")
	}
	bw := &arch.Weights{Config: w.Config.Backbone(), Tensors: w.Tensors}
	h, err := FinalHidden(bw, ids)
	if err != nil {
		return nil, err
	}
	return L2Normalize(h)
}

// L2Normalize returns v / ||v||, summing in float64. A zero or non-finite
// vector has no direction and is an error.
func L2Normalize(v []float32) ([]float32, error) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := math.Sqrt(ss)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("ref: cannot normalise a vector of norm %v", n)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out, nil
}
