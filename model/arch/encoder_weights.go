package arch

import (
	"errors"
	"fmt"
	"strings"
)

// EncoderWeights are an encoder's tensors by canonical name: the names of
// the bare BertModel / XLMRobertaModel ("embeddings...", "encoder.layer.N...",
// "pooler...") and of the heads as the *ForSequenceClassification classes
// save them ("classifier..."). Checkpoints of the classifiers prefix the
// encoder's tensors with "bert." or "roberta." (CheckpointPrefix); model/hf
// accepts either form.
type EncoderWeights struct {
	Config  EncoderConfig
	Tensors map[string]*Tensor
}

// Encoder tensor names.
const (
	EncWordEmbeddings     = "embeddings.word_embeddings.weight"
	EncPositionEmbeddings = "embeddings.position_embeddings.weight"
	EncTypeEmbeddings     = "embeddings.token_type_embeddings.weight"
	EncEmbedNormWeight    = "embeddings.LayerNorm.weight"
	EncEmbedNormBias      = "embeddings.LayerNorm.bias"

	// BertForSequenceClassification: pooler (dense + tanh on the first
	// token), then classifier [labels, hidden] with bias.
	EncPoolerWeight   = "pooler.dense.weight"
	EncPoolerBias     = "pooler.dense.bias"
	EncClassifierW    = "classifier.weight"
	EncClassifierBias = "classifier.bias"

	// XLMRobertaForSequenceClassification: classifier.dense + tanh, then
	// classifier.out_proj [labels, hidden], on the first token.
	EncHeadDenseWeight = "classifier.dense.weight"
	EncHeadDenseBias   = "classifier.dense.bias"
	EncHeadOutWeight   = "classifier.out_proj.weight"
	EncHeadOutBias     = "classifier.out_proj.bias"
)

// Per-layer encoder tensor names, relative to "encoder.layer.N.".
const (
	EncQuery     = "attention.self.query.weight"
	EncQueryBias = "attention.self.query.bias"
	EncKey       = "attention.self.key.weight"
	EncKeyBias   = "attention.self.key.bias"
	EncValue     = "attention.self.value.weight"
	EncValueBias = "attention.self.value.bias"
	EncAttnOut   = "attention.output.dense.weight"
	EncAttnOutB  = "attention.output.dense.bias"
	EncAttnNormW = "attention.output.LayerNorm.weight"
	EncAttnNormB = "attention.output.LayerNorm.bias"
	EncInter     = "intermediate.dense.weight"
	EncInterBias = "intermediate.dense.bias"
	EncOut       = "output.dense.weight"
	EncOutBias   = "output.dense.bias"
	EncOutNormW  = "output.LayerNorm.weight"
	EncOutNormB  = "output.LayerNorm.bias"
)

// EncoderLayerTensor returns the canonical name of a per-layer tensor.
func EncoderLayerTensor(layer int, name string) string {
	return fmt.Sprintf("encoder.layer.%d.%s", layer, name)
}

// CheckpointPrefix is the prefix transformers' classification classes put
// before the encoder's tensors: "roberta." (XLM-R) or "bert.".
func (c EncoderConfig) CheckpointPrefix() string {
	if c.Family() == FamilyXLMR {
		return "roberta."
	}
	return "bert."
}

// IsHeadTensor reports whether a canonical name belongs to a
// classification head (saved without CheckpointPrefix).
func IsHeadTensor(name string) bool { return strings.HasPrefix(name, "classifier.") }

// Shapes returns the expected shape of every tensor the forward pass of c
// reads, by canonical name: a bare encoder's pooler is not listed (an
// embedding model pools the hidden states itself), a BERT classifier's is.
func (c EncoderConfig) Shapes() map[string][]int {
	h, in := c.HiddenSize, c.IntermediateSize
	s := map[string][]int{
		EncWordEmbeddings:     {c.VocabSize, h},
		EncPositionEmbeddings: {c.MaxPositionEmbeddings, h},
		EncTypeEmbeddings:     {c.TypeVocabSize, h},
		EncEmbedNormWeight:    {h}, EncEmbedNormBias: {h},
	}
	for l := range c.NumHiddenLayers {
		for name, shape := range map[string][]int{
			EncQuery: {h, h}, EncQueryBias: {h}, EncKey: {h, h}, EncKeyBias: {h},
			EncValue: {h, h}, EncValueBias: {h}, EncAttnOut: {h, h}, EncAttnOutB: {h},
			EncAttnNormW: {h}, EncAttnNormB: {h},
			EncInter: {in, h}, EncInterBias: {in}, EncOut: {h, in}, EncOutBias: {h},
			EncOutNormW: {h}, EncOutNormB: {h},
		} {
			s[EncoderLayerTensor(l, name)] = shape
		}
	}
	if !c.Classifier() {
		return s
	}
	n := c.NumLabels()
	if c.Family() == FamilyXLMR {
		s[EncHeadDenseWeight], s[EncHeadDenseBias] = []int{h, h}, []int{h}
		s[EncHeadOutWeight], s[EncHeadOutBias] = []int{n, h}, []int{n}
	} else {
		s[EncPoolerWeight], s[EncPoolerBias] = []int{h, h}, []int{h}
		s[EncClassifierW], s[EncClassifierBias] = []int{n, h}, []int{n}
	}
	return s
}

// Check reports every missing or mis-shaped tensor at once; extra tensors
// (a bare encoder's pooler, position_ids buffers) are allowed.
func (w *EncoderWeights) Check() error {
	if err := w.Config.Validate(); err != nil {
		return err
	}
	return checkTensors(w.Tensors, w.Config.Shapes())
}

// ClassifierHead returns the classifier's last linear layer, the one
// that produces the labels: out_proj (XLM-R) or classifier (BERT).
func (w *EncoderWeights) ClassifierHead() (weight, bias *Tensor) {
	if w.Config.Family() == FamilyXLMR {
		return w.Tensors[EncHeadOutWeight], w.Tensors[EncHeadOutBias]
	}
	return w.Tensors[EncClassifierW], w.Tensors[EncClassifierBias]
}

// ScoreRow folds the classifier's last layer into one row and bias whose
// dot product with the tanh features is the logit d, score = sigmoid(d)
// (ActIdentity: d itself): label 0 for one label, label 1 minus label 0
// for a two-label softmax (softmax(l)[1] = sigmoid(l1 - l0)).
func (w *EncoderWeights) ScoreRow() ([]float32, float32, error) {
	if !w.Config.Classifier() {
		return nil, 0, errors.New("not a classifier: no score head")
	}
	if _, err := w.Config.ScoreActivation(); err != nil {
		return nil, 0, err
	}
	wt, bt := w.ClassifierHead()
	h := w.Config.HiddenSize
	if wt == nil || bt == nil || len(wt.Shape) != 2 || wt.Shape[1] != h || len(wt.Data) != wt.Shape[0]*h || len(bt.Data) != wt.Shape[0] {
		return nil, 0, fmt.Errorf("classifier head missing or not [labels, %d] with a bias", h)
	}
	row, bias := append([]float32(nil), wt.Data[:h]...), bt.Data[0]
	if wt.Shape[0] == 2 {
		for i := range row {
			row[i] = wt.Data[h+i] - wt.Data[i]
		}
		bias = bt.Data[1] - bt.Data[0]
	}
	return row, bias, nil
}

// RandomEncoder returns seeded random weights for c, drawn as Random draws
// a decoder's: matrices N(0, 1/sqrt(in)), LayerNorm gains 1 + N(0, 0.1),
// biases N(0, 0.5). A bare encoder gets a pooler too, as BertModel and
// XLMRobertaModel checkpoints carry one (unused by the embedding pass).
func RandomEncoder(c EncoderConfig, seed uint64) (*EncoderWeights, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	shapes := c.Shapes()
	if !c.Classifier() {
		shapes[EncPoolerWeight], shapes[EncPoolerBias] = []int{c.HiddenSize, c.HiddenSize}, []int{c.HiddenSize}
	}
	w := &EncoderWeights{Config: c, Tensors: make(map[string]*Tensor, len(shapes))}
	for i, name := range sortedNames(shapes) {
		t := &Tensor{Shape: shapes[name], Data: make([]float32, product(shapes[name]))}
		fillRandom(name, t, seed, uint64(i))
		w.Tensors[name] = t
	}
	return w, nil
}
