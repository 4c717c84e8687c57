package arch

import (
	"errors"
	"fmt"
	"slices"
)

// BERT-family encoders (BERT, XLM-RoBERTa): post-LayerNorm blocks of
// bidirectional multi-head attention with separate, biased query, key and
// value projections, an intermediate GELU (or what hidden_act names) MLP,
// and learned absolute position and token-type embeddings. Their
// config.json is described by EncoderConfig, their tensors by
// EncoderWeights; encoder_keys.go judges every key as keys.go does for the
// decoders. After transformers' modeling_bert.py and
// modeling_xlm_roberta.py (BertEmbeddings, BertSelfAttention, BertPooler,
// RobertaClassificationHead / XLMRobertaClassificationHead).

// Encoder families: config.json model_type values.
const (
	FamilyBERT = "bert"
	FamilyXLMR = "xlm-roberta"
)

// Encoder architecture names written in config.json "architectures".
const (
	// ArchBertSeqCls is a BERT cross-encoder: pooler (dense + tanh on the
	// first token) then a linear classifier (cross-encoder/ms-marco-MiniLM-L-6-v2).
	ArchBertSeqCls = "BertForSequenceClassification"
	// ArchXLMRSeqCls is an XLM-R cross-encoder: no pooler; the head is
	// dense + tanh + out_proj on the first token (BAAI/bge-reranker-v2-m3).
	ArchXLMRSeqCls = "XLMRobertaForSequenceClassification"
	// ArchBertModel and ArchXLMRModel are the bare encoders embedding
	// models run as (sentence-transformers bi-encoders, BAAI/bge-m3).
	ArchBertModel = "BertModel"
	ArchXLMRModel = "XLMRobertaModel"
)

// encoderArchFamily is the family each encoder architecture belongs to.
var encoderArchFamily = map[string]string{
	ArchBertSeqCls: FamilyBERT, ArchBertModel: FamilyBERT,
	ArchXLMRSeqCls: FamilyXLMR, ArchXLMRModel: FamilyXLMR,
}

// EncoderArchitectures lists the encoder architectures rerankd computes.
func EncoderArchitectures() []string {
	return []string{ArchXLMRSeqCls, ArchBertSeqCls, ArchXLMRModel, ArchBertModel}
}

// IsEncoderArchitecture reports whether name is one of EncoderArchitectures.
func IsEncoderArchitecture(name string) bool {
	_, ok := encoderArchFamily[name]
	return ok
}

// EncoderConfig holds the config.json fields that size and define a BERT or
// XLM-R encoder. JSON keys follow transformers' BertConfig and
// XLMRobertaConfig; ParseEncoderConfig applies their defaults where a key
// is absent.
type EncoderConfig struct {
	Architectures []string `json:"architectures,omitempty"`
	ModelType     string   `json:"model_type"` // FamilyBERT or FamilyXLMR
	// HiddenSize is the width of the residual stream.
	HiddenSize int `json:"hidden_size"`
	// NumHiddenLayers is the number of encoder blocks.
	NumHiddenLayers int `json:"num_hidden_layers"`
	// NumAttentionHeads splits HiddenSize into heads of
	// HiddenSize/NumAttentionHeads (BERT has no separate head_dim).
	NumAttentionHeads int `json:"num_attention_heads"`
	// IntermediateSize is the MLP width: output(act(intermediate(x))).
	IntermediateSize int `json:"intermediate_size"`
	// HiddenAct is the MLP activation (HiddenActs lists those computed).
	HiddenAct string `json:"hidden_act"`
	// LayerNormEps is added to the variance in every LayerNorm.
	LayerNormEps float64 `json:"layer_norm_eps"`
	// VocabSize is the word-embedding rows.
	VocabSize int `json:"vocab_size"`
	// MaxPositionEmbeddings is the position-embedding rows. XLM-R numbers
	// real tokens from PadTokenID+1, so it takes MaxTokens() =
	// max_position_embeddings - pad_token_id - 1 tokens; BERT all of them.
	MaxPositionEmbeddings int `json:"max_position_embeddings"`
	// TypeVocabSize is the token-type-embedding rows (2 for BERT's
	// sentence A/B, 1 for XLM-R, whose type ids are always 0).
	TypeVocabSize int `json:"type_vocab_size"`
	// PadTokenID is XLM-R's padding_idx, the offset of its position ids.
	PadTokenID *int `json:"pad_token_id,omitempty"`
	// PositionEmbeddingType must be "absolute" (relative_key variants
	// change attention and are refused).
	PositionEmbeddingType string `json:"position_embedding_type,omitempty"`
	// ID2Label and Label2ID name a classifier's labels (NumLabels).
	ID2Label map[string]string `json:"id2label,omitempty"`
	Label2ID map[string]int    `json:"label2id,omitempty"`
	// SentenceTransformers and SbertCEActivation are the CrossEncoder
	// activation, as for the decoders' classification heads (seqcls.go).
	SentenceTransformers *STCrossEncoder `json:"sentence_transformers,omitempty"`
	SbertCEActivation    string          `json:"sbert_ce_default_activation_function,omitempty"`
	// TorchDtype is the checkpoint's storage type; informational.
	TorchDtype string `json:"torch_dtype,omitempty"`
}

// HiddenActs are the hidden_act values rerankd computes, as transformers'
// ACT2FN defines them: "gelu" is the exact erf form, "gelu_new" and
// "gelu_pytorch_tanh" the tanh approximation, "relu" max(0, x).
var HiddenActs = []string{"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"}

// XLMRBase returns the dimensions of BAAI/bge-reranker-base (XLM-R base:
// 12 layers of 768, 250,002 tokens, 514 positions). From memory of the
// model's config.json, not re-read here.
func XLMRBase() EncoderConfig {
	pad := 1
	return EncoderConfig{
		Architectures: []string{ArchXLMRSeqCls}, ModelType: FamilyXLMR,
		HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072,
		HiddenAct: "gelu", LayerNormEps: 1e-5, VocabSize: 250002, MaxPositionEmbeddings: 514,
		TypeVocabSize: 1, PadTokenID: &pad, PositionEmbeddingType: "absolute",
		ID2Label: map[string]string{"0": "LABEL_0"}, TorchDtype: "float32",
	}
}

// BGERerankerV2M3 returns the dimensions of BAAI/bge-reranker-v2-m3 (XLM-R
// large with 8,194 positions: 24 layers of 1024, 16 heads, one label). From
// memory of the model's config.json, not re-read here.
func BGERerankerV2M3() EncoderConfig {
	c := XLMRBase()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 1024, 24, 16, 4096
	c.MaxPositionEmbeddings = 8194
	return c
}

// MiniLML6 returns the dimensions of cross-encoder/ms-marco-MiniLM-L-6-v2
// (a BERT of 6 layers of 384, 12 heads, the uncased BERT vocabulary of
// 30,522, one label). From memory of the model's config.json.
func MiniLML6() EncoderConfig {
	pad := 0
	return EncoderConfig{
		Architectures: []string{ArchBertSeqCls}, ModelType: FamilyBERT,
		HiddenSize: 384, NumHiddenLayers: 6, NumAttentionHeads: 12, IntermediateSize: 1536,
		HiddenAct: "gelu", LayerNormEps: 1e-12, VocabSize: 30522, MaxPositionEmbeddings: 512,
		TypeVocabSize: 2, PadTokenID: &pad, PositionEmbeddingType: "absolute",
		ID2Label: map[string]string{"0": "LABEL_0"}, TorchDtype: "float32",
	}
}

// TinyEncoder returns a 2-layer encoder of family (FamilyBERT or
// FamilyXLMR) with small dimensions and vocabulary, for unit tests; embed
// selects the bare-encoder architecture instead of the classifier.
func TinyEncoder(family string, embed bool) EncoderConfig {
	c := MiniLML6()
	if family == FamilyXLMR {
		c = XLMRBase()
	}
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 32, 2, 4, 48
	c.VocabSize, c.MaxPositionEmbeddings = 100, 66
	if embed {
		c.Architectures, c.ID2Label = []string{map[string]string{FamilyBERT: ArchBertModel, FamilyXLMR: ArchXLMRModel}[family]}, nil
	}
	return c
}

// Family returns model_type, or the family of the architectures when
// config.json has none.
func (c EncoderConfig) Family() string {
	if c.ModelType != "" {
		return c.ModelType
	}
	for _, a := range c.Architectures {
		if f, ok := encoderArchFamily[a]; ok {
			return f
		}
	}
	return ""
}

// Classifier reports whether c names a sequence-classification head.
func (c EncoderConfig) Classifier() bool {
	return slices.Contains(c.Architectures, ArchBertSeqCls) || slices.Contains(c.Architectures, ArchXLMRSeqCls)
}

// HeadDim is the width of one attention head.
func (c EncoderConfig) HeadDim() int {
	if c.NumAttentionHeads <= 0 {
		return 0
	}
	return c.HiddenSize / c.NumAttentionHeads
}

// PadID returns pad_token_id (0 when absent, BertConfig's default; an
// XLM-R config always has one after ParseEncoderConfig).
func (c EncoderConfig) PadID() int {
	if c.PadTokenID == nil {
		return 0
	}
	return *c.PadTokenID
}

// PositionOffset is the position id of a sequence's first token: XLM-R
// numbers tokens from padding_idx + 1 (padding_idx + cumsum(mask)), BERT
// from 0.
func (c EncoderConfig) PositionOffset() int {
	if c.Family() == FamilyXLMR {
		return c.PadID() + 1
	}
	return 0
}

// MaxTokens is the longest sequence the position embeddings cover.
func (c EncoderConfig) MaxTokens() int { return c.MaxPositionEmbeddings - c.PositionOffset() }

// NumLabels is the classifier's number of labels (2 when config.json names
// none, as transformers defaults).
func (c EncoderConfig) NumLabels() int {
	if n := len(c.ID2Label); n > 0 {
		return n
	}
	if n := len(c.Label2ID); n > 0 {
		return n
	}
	return 2
}

// ScoreActivation returns how the classifier's logits become the score,
// read as sentence-transformers' CrossEncoder does (see
// Config.ScoreActivation).
func (c EncoderConfig) ScoreActivation() (Activation, error) {
	return scoreActivation(c.SentenceTransformers, c.SbertCEActivation, c.NumLabels())
}

// Validate reports every problem at once.
func (c EncoderConfig) Validate() error {
	var errs []error
	pos := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be > 0, got %d", name, v))
		} else if limit := sizeLimits[name]; limit > 0 && v > limit {
			// No model has it; a hostile or corrupt config.json would
			// have rerankd allocate terabytes before the weights say no.
			errs = append(errs, fmt.Errorf("%s %d is beyond any real model (at most %d)", name, v, limit))
		}
	}
	pos("hidden_size", c.HiddenSize)
	pos("num_hidden_layers", c.NumHiddenLayers)
	pos("num_attention_heads", c.NumAttentionHeads)
	pos("intermediate_size", c.IntermediateSize)
	pos("vocab_size", c.VocabSize)
	pos("type_vocab_size", c.TypeVocabSize)
	pos("max_position_embeddings", c.MaxPositionEmbeddings)
	if c.NumAttentionHeads > 0 && c.HiddenSize%c.NumAttentionHeads != 0 {
		errs = append(errs, fmt.Errorf("hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads))
	}
	if !(c.LayerNormEps > 0) {
		errs = append(errs, fmt.Errorf("layer_norm_eps must be > 0, got %v", c.LayerNormEps))
	}
	if !slices.Contains(HiddenActs, c.HiddenAct) {
		errs = append(errs, fmt.Errorf("hidden_act %q is not supported (rerankd computes %v)", c.HiddenAct, HiddenActs))
	}
	if c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute" {
		errs = append(errs, fmt.Errorf("position_embedding_type %q is not supported (rerankd implements absolute position embeddings only)", c.PositionEmbeddingType))
	}
	if p := c.PadID(); p < 0 || (c.VocabSize > 0 && p >= c.VocabSize) {
		errs = append(errs, fmt.Errorf("pad_token_id %d outside the vocabulary of %d", p, c.VocabSize))
	}
	if c.MaxTokens() <= 0 {
		errs = append(errs, fmt.Errorf("max_position_embeddings %d leaves no position after the offset %d (pad_token_id + 1)", c.MaxPositionEmbeddings, c.PositionOffset()))
	}
	switch f := c.Family(); f {
	case FamilyBERT, FamilyXLMR:
		for _, a := range c.Architectures {
			if af, ok := encoderArchFamily[a]; ok && af != f {
				errs = append(errs, fmt.Errorf("architectures %s is a %s model but model_type is %q", a, af, f))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("model_type %q: encoders must be %s or %s", f, FamilyBERT, FamilyXLMR))
	}
	known := 0
	for _, a := range c.Architectures {
		if IsEncoderArchitecture(a) {
			known++
		} else {
			errs = append(errs, fmt.Errorf("architecture %s is not supported (rerankd computes %v)", a, EncoderArchitectures()))
		}
	}
	if known != 1 {
		errs = append(errs, fmt.Errorf("architectures %v: want exactly one of %v", c.Architectures, EncoderArchitectures()))
	}
	if c.Classifier() {
		if _, err := c.ScoreActivation(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Params returns the number of parameters the forward pass reads
// (embeddings, layers, and the head of a classifier).
func (c EncoderConfig) Params() int64 {
	var n int64
	for _, s := range c.Shapes() {
		n += int64(product(s))
	}
	return n
}

// FLOPsPerToken is the matrix work of one token through the encoder's
// layers (2 FLOPs per multiply-add), excluding attention scores and heads.
func (c EncoderConfig) FLOPsPerToken() float64 {
	h, in := float64(c.HiddenSize), float64(c.IntermediateSize)
	return 2 * float64(c.NumHiddenLayers) * (4*h*h + 2*h*in)
}
