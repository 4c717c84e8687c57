package ref

import (
	"errors"
	"fmt"
	"math"

	"github.com/rerankd/rerankd/model/arch"
)

// The BERT / XLM-R encoder pass, after transformers' modeling_bert.py and
// modeling_xlm_roberta.py: embeddings (word + position + token type, then
// LayerNorm), post-LayerNorm blocks (x = LN(x + attn(x)); x = LN(x +
// mlp(x))) with bidirectional attention over the sequence, and the heads.
// One unpadded sequence at a time, so there is no mask: every token sees
// every token.

// EncoderHidden returns the last block's hidden state at every position of
// one unpadded sequence. typeIDs may be nil (all 0, as XLM-R always is).
func EncoderHidden(w *arch.EncoderWeights, ids, typeIDs []int) ([][]float32, error) {
	if w == nil {
		return nil, errors.New("ref: nil weights")
	}
	if err := w.Check(); err != nil {
		return nil, fmt.Errorf("ref: %w", err)
	}
	c := w.Config
	pos, err := encoderPositions(c, ids)
	if err != nil {
		return nil, err
	}
	if typeIDs != nil && len(typeIDs) != len(ids) {
		return nil, fmt.Errorf("ref: %d type ids for %d tokens", len(typeIDs), len(ids))
	}
	t := func(name string) []float32 { return w.Tensors[name].Data }
	hs := c.HiddenSize
	row := func(table string, i int) []float32 { return t(table)[i*hs : (i+1)*hs] }
	x := make([][]float32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("ref: token %d at position %d outside vocabulary of %d", id, i, c.VocabSize)
		}
		typ := 0
		if typeIDs != nil {
			typ = typeIDs[i]
		}
		if typ < 0 || typ >= c.TypeVocabSize {
			return nil, fmt.Errorf("ref: token type %d at position %d outside type_vocab_size %d", typ, i, c.TypeVocabSize)
		}
		e := make([]float32, hs)
		word, p, ty := row(arch.EncWordEmbeddings, id), row(arch.EncPositionEmbeddings, pos[i]), row(arch.EncTypeEmbeddings, typ)
		for j := range e {
			e[j] = float32(float64(word[j]) + float64(ty[j]) + float64(p[j]))
		}
		x[i] = layerNorm(e, t(arch.EncEmbedNormWeight), t(arch.EncEmbedNormBias), c.LayerNormEps)
	}
	act, err := activation(c.HiddenAct)
	if err != nil {
		return nil, err
	}
	for l := range c.NumHiddenLayers {
		lt := func(name string) []float32 { return t(arch.EncoderLayerTensor(l, name)) }
		q := affine(x, lt(arch.EncQuery), lt(arch.EncQueryBias))
		k := affine(x, lt(arch.EncKey), lt(arch.EncKeyBias))
		v := affine(x, lt(arch.EncValue), lt(arch.EncValueBias))
		a := affine(bidirectional(q, k, v, c.NumAttentionHeads, c.HeadDim()), lt(arch.EncAttnOut), lt(arch.EncAttnOutB))
		x = addNorm(x, a, lt(arch.EncAttnNormW), lt(arch.EncAttnNormB), c.LayerNormEps)
		m := affine(x, lt(arch.EncInter), lt(arch.EncInterBias))
		for _, r := range m {
			for j, v := range r {
				r[j] = float32(act(float64(v)))
			}
		}
		x = addNorm(x, affine(m, lt(arch.EncOut), lt(arch.EncOutBias)), lt(arch.EncOutNormW), lt(arch.EncOutNormB), c.LayerNormEps)
	}
	return x, nil
}

// EncoderLogits returns a classifier's raw logits [num_labels] for one
// unpadded sequence, computed from the head's own tensors (not the folded
// row the graphs use, so the folding is checked too): XLM-R's
// classifier.dense + tanh + out_proj on the first token, or BERT's pooler
// (dense + tanh on the first token) then classifier.
func EncoderLogits(w *arch.EncoderWeights, ids, typeIDs []int) ([]float32, error) {
	if w == nil || !w.Config.Classifier() {
		return nil, errors.New("ref: not an encoder classifier")
	}
	hs, err := EncoderHidden(w, ids, typeIDs)
	if err != nil {
		return nil, err
	}
	t := func(name string) []float32 { return w.Tensors[name].Data }
	dense, bias := arch.EncPoolerWeight, arch.EncPoolerBias
	if w.Config.Family() == arch.FamilyXLMR {
		dense, bias = arch.EncHeadDenseWeight, arch.EncHeadDenseBias
	}
	f := affine(hs[:1], t(dense), t(bias))[0]
	for i, v := range f {
		f[i] = float32(math.Tanh(float64(v)))
	}
	out, outB := w.ClassifierHead()
	return affine([][]float32{f}, out.Data, outB.Data)[0], nil
}

// EncoderScoreLogit is the logit the graphs output: the single label's, or
// label 1 minus label 0 for a two-label softmax (ActSoftmax2), so that
// score = sigmoid(logit) (or the logit itself for ActIdentity).
func EncoderScoreLogit(w *arch.EncoderWeights, ids, typeIDs []int) (float32, error) {
	logits, err := EncoderLogits(w, ids, typeIDs)
	if err != nil {
		return 0, err
	}
	if len(logits) == 2 {
		return float32(float64(logits[1]) - float64(logits[0])), nil
	}
	return logits[0], nil
}

// EncoderEmbedding returns a bi-encoder's vector for one unpadded sequence:
// its hidden states pooled as p says.
func EncoderEmbedding(w *arch.EncoderWeights, ids, typeIDs []int, p arch.Pooling) ([]float32, error) {
	hs, err := EncoderHidden(w, ids, typeIDs)
	if err != nil {
		return nil, err
	}
	return p.Pool(hs)
}

// encoderPositions returns the position ids of ids: 0..n-1 for BERT; for
// XLM-R padding_idx + cumsum(ids != padding_idx), padding tokens getting
// padding_idx, as transformers' create_position_ids_from_input_ids.
func encoderPositions(c arch.EncoderConfig, ids []int) ([]int, error) {
	if len(ids) == 0 {
		return nil, errors.New("ref: empty sequence")
	}
	pos := make([]int, len(ids))
	pad, n := c.PadID(), 0
	for i, id := range ids {
		switch {
		case c.Family() != arch.FamilyXLMR:
			pos[i] = i
		case id == pad:
			pos[i] = pad
		default:
			n++
			pos[i] = pad + n
		}
		if pos[i] >= c.MaxPositionEmbeddings {
			return nil, fmt.Errorf("ref: %d tokens exceed the %d the position embeddings cover", len(ids), c.MaxTokens())
		}
	}
	return pos, nil
}

// bidirectional is multi-head attention of every position over every
// position, scores scaled by 1/sqrt(head_dim).
func bidirectional(q, k, v [][]float32, nh, hd int) [][]float32 {
	scale := 1 / math.Sqrt(float64(hd))
	out := make([][]float32, len(q))
	scores := make([]float64, len(k))
	for i := range q {
		out[i] = make([]float32, nh*hd)
		for h := range nh {
			lo, hi := h*hd, (h+1)*hd
			maxS := math.Inf(-1)
			for j := range k {
				scores[j] = dot(q[i][lo:hi], k[j][lo:hi]) * scale
				maxS = math.Max(maxS, scores[j])
			}
			var sum float64
			for j := range scores {
				scores[j] = math.Exp(scores[j] - maxS)
				sum += scores[j]
			}
			for d := lo; d < hi; d++ {
				var acc float64
				for j := range scores {
					acc += scores[j] * float64(v[j][d])
				}
				out[i][d] = float32(acc / sum)
			}
		}
	}
	return out
}

// activation returns hidden_act as transformers' ACT2FN computes it.
func activation(name string) (func(float64) float64, error) {
	switch name {
	case "gelu":
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, nil
	case "gelu_new", "gelu_pytorch_tanh":
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}, nil
	case "relu":
		return func(x float64) float64 { return math.Max(x, 0) }, nil
	}
	return nil, fmt.Errorf("ref: hidden_act %q not implemented", name)
}

// affine returns x·Wᵀ + b for W [out, in].
func affine(x [][]float32, w, b []float32) [][]float32 {
	y := linear(x, w, len(b))
	addBias(y, b)
	return y
}

// addNorm returns LayerNorm(x + d) row by row.
func addNorm(x, d [][]float32, g, b []float32, eps float64) [][]float32 {
	out := make([][]float32, len(x))
	for i := range x {
		s := make([]float32, len(x[i]))
		for j := range s {
			s[j] = x[i][j] + d[i][j]
		}
		out[i] = layerNorm(s, g, b, eps)
	}
	return out
}

// layerNorm returns (x - mean) / sqrt(var + eps) * g + b, var the biased
// variance, as torch.nn.LayerNorm.
func layerNorm(x, g, b []float32, eps float64) []float32 {
	var mean float64
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	var vr float64
	for _, v := range x {
		vr += (float64(v) - mean) * (float64(v) - mean)
	}
	inv := 1 / math.Sqrt(vr/float64(len(x))+eps)
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32((float64(v)-mean)*inv*float64(g[i]) + float64(b[i]))
	}
	return out
}
