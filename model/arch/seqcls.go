package arch

import (
	"errors"
	"fmt"
	"strings"
)

// Sequence-classification checkpoints: a Qwen3 backbone whose head is a
// linear layer score.weight [num_labels, hidden] without bias, applied to
// the final-normed hidden state of each row's last token. This is
// transformers' Qwen3ForSequenceClassification (and Qwen2's, which shares
// the same generic *ForSequenceClassification code): logits are computed at
// every position, then pooled at the last token that is not pad_token_id
// (the rightmost one; with no pad_token_id, the last position, batch 1
// only). From memory of transformers 4.5x modeling_qwen3.py /
// modeling_qwen2.py and GenericForSequenceClassification; not re-read here
// (no network).
//
// The form is what vLLM recommends for Qwen3-Reranker (tomaarsen/
// Qwen3-Reranker-0.6B-seq-cls: score.weight holds lm_head[yes] -
// lm_head[no], one label) and what a fine-tuned sentence-transformers
// CrossEncoder saves (michaelfeil/mxbai-rerank-base-v2-seq, a Qwen2
// backbone, see qwen2.go).
//
// The score is the activation of the logits, read from config.json as
// sentence-transformers writes it (ScoreActivation). rerankd folds the
// head into one vector (ScoreVector) whose dot product with the hidden
// state is a logit d with score = sigmoid(d) (or d itself for Identity),
// so the graphs are those of a causal-LM reranker.
const (
	// ArchSeqCls is Qwen3ForSequenceClassification.
	ArchSeqCls = "Qwen3ForSequenceClassification"
	// ArchQwen2SeqCls is Qwen2ForSequenceClassification.
	ArchQwen2SeqCls = "Qwen2ForSequenceClassification"
	// ScoreWeight is the classifier of a sequence-classification checkpoint.
	ScoreWeight = "score.weight"
)

// STCrossEncoder is config.json's "sentence_transformers" object as
// sentence-transformers v4+ writes it for a CrossEncoder (from memory:
// {"activation_fn": "torch.nn.modules.activation.Sigmoid", "version": ...}).
type STCrossEncoder struct {
	ActivationFn string `json:"activation_fn,omitempty"`
	Version      string `json:"version,omitempty"`
}

// Activation is how a classifier's logits become the score.
type Activation string

// Activations rerankd computes.
const (
	// ActSigmoid: score = sigmoid(logit) of a single label (and of the
	// yes-minus-no logit of a causal-LM reranker).
	ActSigmoid Activation = "sigmoid"
	// ActIdentity: the score is the raw logit of a single label (a
	// CrossEncoder saved with torch.nn.Identity). rerankd still reports
	// sigmoid(logit) as relevance_score, a probability like every model's;
	// raw_scores returns the model's own score, the logit.
	ActIdentity Activation = "identity"
	// ActSoftmax2: two labels, score = softmax(logits)[1] =
	// sigmoid(logit1 - logit0).
	ActSoftmax2 Activation = "softmax2"
)

// SeqCls reports whether config.json names a sequence-classification
// architecture.
func (c Config) SeqCls() bool {
	return c.HasArchitecture(ArchSeqCls) || c.HasArchitecture(ArchQwen2SeqCls)
}

// NumLabels is the classifier's number of labels: len(id2label), or 2 when
// config.json has none, as transformers' PretrainedConfig defaults.
func (c Config) NumLabels() int {
	if n := len(c.ID2Label); n > 0 {
		return n
	}
	if n := len(c.Label2ID); n > 0 {
		return n
	}
	return 2
}

// activationName is the class name of a torch activation path
// ("torch.nn.modules.activation.Sigmoid" → "Sigmoid").
func activationName(path string) string {
	return path[strings.LastIndex(path, ".")+1:]
}

// ScoreActivation returns the activation of a sequence-classification
// checkpoint: sentence_transformers.activation_fn, else
// sbert_ce_default_activation_function, else sentence-transformers'
// default (Sigmoid for one label; for two labels the softmax, whose
// probability of label 1 is the relevance, as a two-label classifier's
// "relevant" class). Combinations without one relevance number (Sigmoid
// over 2 labels, more than 2 labels, another activation) are refused by
// name. A causal-LM config always gives ActSigmoid.
func (c Config) ScoreActivation() (Activation, error) {
	if !c.SeqCls() {
		return ActSigmoid, nil
	}
	return scoreActivation(c.SentenceTransformers, c.SbertCEActivation, c.NumLabels())
}

// scoreActivation is ScoreActivation for a classifier of n labels whose
// config.json has st (sentence_transformers) and sbert
// (sbert_ce_default_activation_function); encoders read theirs the same way.
func scoreActivation(st *STCrossEncoder, sbert string, n int) (Activation, error) {
	fn, key := sbert, "sbert_ce_default_activation_function"
	if st != nil && st.ActivationFn != "" {
		fn, key = st.ActivationFn, "sentence_transformers.activation_fn"
	}
	name := activationName(fn)
	switch {
	case n == 1 && (name == "" || name == "Sigmoid"):
		return ActSigmoid, nil
	case n == 1 && name == "Identity":
		return ActIdentity, nil
	case n == 2 && (name == "" || name == "Identity" || name == "Softmax"):
		return ActSoftmax2, nil
	case n != 1 && n != 2:
		return "", fmt.Errorf("%d labels (id2label): a reranker needs 1 (a relevance logit) or 2 (softmax, label 1 relevant)", n)
	}
	return "", fmt.Errorf("%s %q with %d labels is not supported (1 label: Sigmoid or Identity; 2 labels: Softmax or Identity)", key, fn, n)
}

// ScoreVector returns the folded head: a vector v with logit = dot(final
// hidden state, v) and score = sigmoid(logit) (ActIdentity: the logit). A
// causal-LM reranker's is HeadDiff(yes, no); a classifier's is score row 0
// (one label) or row 1 minus row 0 (two labels, softmax).
func (w *Weights) ScoreVector(yesID, noID int) ([]float32, error) {
	if !w.Config.SeqCls() {
		return w.HeadDiff(yesID, noID)
	}
	if _, err := w.Config.ScoreActivation(); err != nil {
		return nil, err
	}
	t := w.Tensors[ScoreWeight]
	if t == nil {
		return nil, errors.New("no " + ScoreWeight)
	}
	h := w.Config.HiddenSize
	if len(t.Shape) != 2 || t.Shape[1] != h || len(t.Data) != t.Shape[0]*h {
		return nil, fmt.Errorf("%s has shape %v, want [%d %d]", ScoreWeight, t.Shape, w.Config.NumLabels(), h)
	}
	v := append([]float32(nil), t.Data[:h]...)
	if t.Shape[0] == 2 {
		for i := range v {
			v[i] = t.Data[h+i] - t.Data[i]
		}
	}
	return v, nil
}
