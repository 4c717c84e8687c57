package ref

import (
	"errors"
	"fmt"
	"math"

	"github.com/rerankd/rerankd/model/arch"
)

// SeqClsLogits returns the classifier logits [num_labels] of a
// sequence-classification checkpoint (arch.ArchSeqCls) for one unpadded
// sequence, computed as transformers' *ForSequenceClassification does:
// score.weight applied to the final-normed hidden state at the last
// position whose token is not pad_token_id (argmax of index × non-pad: the
// rightmost such position, 0 when every token is pad; the last position
// when config.json has no pad_token_id). It uses score.weight itself, not
// the folded vector the graphs use, so it checks the folding too.
func SeqClsLogits(w *arch.Weights, ids []int) ([]float32, error) {
	if w == nil || !w.Config.SeqCls() {
		return nil, errors.New("ref: not a sequence-classification checkpoint")
	}
	score := w.Tensors[arch.ScoreWeight]
	hd := w.Config.HiddenSize
	if score == nil || len(score.Shape) != 2 || score.Shape[1] != hd {
		return nil, fmt.Errorf("ref: %s missing or not [labels, %d]", arch.ScoreWeight, hd)
	}
	hs, err := forward(w, ids)
	if err != nil {
		return nil, err
	}
	pos := len(ids) - 1
	if p := w.Config.PadTokenID; p != nil {
		for pos > 0 && ids[pos] == *p {
			pos--
		}
	}
	h := rmsNorm(hs[pos], w.Tensors[arch.FinalNorm].Data, w.Config.RMSNormEps)
	out := make([]float32, score.Shape[0])
	for i := range out {
		out[i] = float32(dot(h, score.Data[i*hd:(i+1)*hd]))
	}
	return out, nil
}

// SeqClsScore applies the checkpoint's activation to its logits: the
// model's own score (sentence-transformers' CrossEncoder.predict).
func SeqClsScore(act arch.Activation, logits []float32) (float64, error) {
	switch {
	case act == arch.ActSigmoid && len(logits) == 1:
		return 1 / (1 + math.Exp(-float64(logits[0]))), nil
	case act == arch.ActIdentity && len(logits) == 1:
		return float64(logits[0]), nil
	case act == arch.ActSoftmax2 && len(logits) == 2:
		m := math.Max(float64(logits[0]), float64(logits[1]))
		e0, e1 := math.Exp(float64(logits[0])-m), math.Exp(float64(logits[1])-m)
		return e1 / (e0 + e1), nil
	}
	return 0, fmt.Errorf("ref: activation %q over %d logits", act, len(logits))
}
