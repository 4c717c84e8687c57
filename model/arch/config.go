package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Config holds the config.json fields that size a Qwen3 (or Qwen2, see
// qwen2.go) decoder. Field names and JSON keys follow Hugging Face's
// Qwen3Config.
type Config struct {
	Architectures []string `json:"architectures,omitempty"`
	ModelType     string   `json:"model_type"` // "qwen3" or "qwen2" (Family)
	// HiddenSize is the width of the residual stream.
	HiddenSize int `json:"hidden_size"`
	// NumHiddenLayers is the number of decoder blocks.
	NumHiddenLayers int `json:"num_hidden_layers"`
	// NumAttentionHeads query heads; NumKeyValueHeads key/value heads
	// (grouped-query attention: each kv head serves Heads/KVHeads q heads).
	NumAttentionHeads int `json:"num_attention_heads"`
	NumKeyValueHeads  int `json:"num_key_value_heads"`
	// HeadDim is set explicitly in Qwen3 (128) and need not equal
	// HiddenSize/NumAttentionHeads.
	HeadDim int `json:"head_dim"`
	// IntermediateSize is the SwiGLU width: down(silu(gate(x)) * up(x)).
	IntermediateSize int `json:"intermediate_size"`
	// RMSNormEps is added to the mean square in every RMSNorm.
	RMSNormEps float64 `json:"rms_norm_eps"`
	// RopeTheta is the rotary base (1e6 for Qwen3).
	RopeTheta float64 `json:"rope_theta"`
	// VocabSize is the embedding rows (151,669 for Qwen3; the tokenizer may
	// have fewer ids than rows).
	VocabSize int `json:"vocab_size"`
	// TieWordEmbeddings: the output head reuses embed_tokens (no lm_head).
	TieWordEmbeddings bool `json:"tie_word_embeddings"`
	// MaxPositionEmbeddings bounds sequence length.
	MaxPositionEmbeddings int `json:"max_position_embeddings,omitempty"`
	// TorchDtype is the checkpoint's storage type ("bfloat16", ...); informational.
	TorchDtype string `json:"torch_dtype,omitempty"`

	// The fields below matter to sequence-classification checkpoints only
	// (see seqcls.go); a causal LM reranker ignores them.

	// PadTokenID is the token transformers' *ForSequenceClassification
	// skips when it looks for each row's last token.
	PadTokenID *int `json:"pad_token_id,omitempty"`
	// ID2Label and Label2ID name the classifier's labels; their number is
	// num_labels (transformers writes no num_labels key; 2 when absent).
	ID2Label map[string]string `json:"id2label,omitempty"`
	Label2ID map[string]int    `json:"label2id,omitempty"`
	// SentenceTransformers is what sentence-transformers (v4+) writes into
	// config.json for a CrossEncoder: the activation applied to its logits.
	SentenceTransformers *STCrossEncoder `json:"sentence_transformers,omitempty"`
	// SbertCEActivation is the same choice as written by sentence-transformers
	// before v4 ("sbert_ce_default_activation_function").
	SbertCEActivation string `json:"sbert_ce_default_activation_function,omitempty"`

	// backbone is set by Backbone: Shapes then lists no head tensor.
	backbone bool
}

// Qwen3Reranker06B returns the dimensions of Qwen3-Reranker-0.6B.
func Qwen3Reranker06B() Config {
	return Config{
		Architectures: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3",
		HiddenSize: 1024, NumHiddenLayers: 28, NumAttentionHeads: 16, NumKeyValueHeads: 8,
		HeadDim: 128, IntermediateSize: 3072, RMSNormEps: 1e-6, RopeTheta: 1e6,
		VocabSize: 151669, TieWordEmbeddings: true, MaxPositionEmbeddings: 40960, TorchDtype: "float32",
	}
}

// Qwen3Reranker4B returns the dimensions of Qwen3-Reranker-4B: 32 query
// heads of 128 over a 2560-wide stream (the attention width, 4096, exceeds
// the hidden size), 8 kv heads, tied head. From memory of the model's
// config.json (Qwen3-4B's), not re-read here.
func Qwen3Reranker4B() Config {
	c := Qwen3Reranker06B()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads = 2560, 36, 32, 8
	c.IntermediateSize, c.TieWordEmbeddings = 9728, true
	return c
}

// Qwen3Reranker8B returns the dimensions of Qwen3-Reranker-8B: 32 query
// heads of 128 over a 4096-wide stream, 8 kv heads, an untied lm_head. From
// memory of the model's config.json (Qwen3-8B's), not re-read here.
func Qwen3Reranker8B() Config {
	c := Qwen3Reranker06B()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads = 4096, 36, 32, 8
	c.IntermediateSize, c.TieWordEmbeddings = 12288, false
	return c
}

// Tiny returns a 2-layer model with the real Qwen3 vocabulary, small enough
// for unit tests (about 10M parameters, nearly all in the embedding).
func Tiny() Config {
	c := Qwen3Reranker06B()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads = 64, 2, 4, 2
	c.HeadDim, c.IntermediateSize = 16, 128
	return c
}

// Validate reports every problem at once.
func (c Config) Validate() error {
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
	pos("num_key_value_heads", c.NumKeyValueHeads)
	pos("head_dim", c.HeadDim)
	pos("intermediate_size", c.IntermediateSize)
	pos("vocab_size", c.VocabSize)
	if c.NumKeyValueHeads > 0 && c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		errs = append(errs, fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d",
			c.NumAttentionHeads, c.NumKeyValueHeads))
	}
	if c.HeadDim%2 != 0 {
		errs = append(errs, fmt.Errorf("head_dim %d must be even (rotary halves)", c.HeadDim))
	}
	if !(c.RMSNormEps > 0) {
		errs = append(errs, fmt.Errorf("rms_norm_eps must be > 0, got %v", c.RMSNormEps))
	}
	if !(c.RopeTheta > 0) {
		errs = append(errs, fmt.Errorf("rope_theta must be > 0, got %v", c.RopeTheta))
	}
	if c.SeqCls() {
		if _, err := c.ScoreActivation(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.checkFamily()...)
	return errors.Join(errs...)
}

// ReadConfig reads and validates a config.json (see ParseConfig); the
// warnings about keys rerankd does not know are dropped. Use
// ReadConfigWarnings where they can reach a user (rerankd convert).
func ReadConfig(path string) (Config, error) {
	c, _, err := ReadConfigWarnings(path)
	return c, err
}

// ReadConfigInfo reads a config.json that describes a model whose
// computation is fixed elsewhere, as an opened ONNX folder's is by its
// graph: it decodes and validates the sizes but does not judge the keys
// that change the computation (ParseConfig does), since an exporter that
// implemented them is not wrong to have them. Never use it to build a
// graph or run the reference pass from a checkpoint.
func ReadConfigInfo(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := decodeConfig(data)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ReadConfigWarnings reads path with ParseConfig; the error names the path.
func ReadConfigWarnings(path string) (Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, fmt.Errorf("config: %w", err)
	}
	c, warns, err := ParseConfig(data)
	if err != nil {
		return Config{}, warns, fmt.Errorf("config %s: %w", path, err)
	}
	return c, warns, nil
}

// ParseConfig decodes and validates config.json bytes. Hugging Face configs
// omit head_dim in some Qwen-family releases; it then defaults to
// hidden_size / num_attention_heads, as transformers does (and
// num_key_value_heads to num_attention_heads).
//
// Every key is accounted for (see the package doc): the Config fields are
// used; a key that would make transformers' Qwen3 compute something
// rerankd does not (RoPE scaling, attention biases, another activation, a
// sliding window that binds, ...) is an error unless its value means the
// default; a key known to be harmless at inference is ignored; any other
// key is returned as a warning, sorted, since rerankd cannot tell whether
// it matters. The error reports every problem at once.
func ParseConfig(data []byte) (Config, []string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return Config{}, nil, err
	}
	c, decodeErr := decodeConfig(data)
	warns, errs := checkKeys(&c, keys)
	if decodeErr != nil {
		// A mistyped field leaves its zero value: Validate would only
		// repeat the same problem less clearly.
		errs = append([]error{decodeErr}, errs...)
	} else if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, warns, err
	}
	return c, warns, nil
}

// decodeConfig decodes Config's fields, with transformers' defaults for
// head_dim and num_key_value_heads. On a mistyped field it returns the
// error and what decoded.
func decodeConfig(data []byte) (Config, error) {
	var c Config
	err := json.Unmarshal(data, &c)
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	return c, err
}

// WriteConfig writes c as indented JSON.
func WriteConfig(path string, c Config) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Params returns the number of parameters (embedding and head counted once
// when tied).
func (c Config) Params() int64 {
	h, hd := int64(c.HiddenSize), int64(c.HeadDim)
	q, kv := int64(c.NumAttentionHeads)*hd, int64(c.NumKeyValueHeads)*hd
	layer := 2*h + h*q + 2*h*kv + q*h + 3*h*int64(c.IntermediateSize)
	if c.QKNorm() {
		layer += 2 * hd
	}
	if c.QKVBias() {
		layer += q + 2*kv
	}
	n := int64(c.VocabSize)*h + int64(c.NumHiddenLayers)*layer + h
	switch {
	case c.SeqCls():
		n += int64(c.NumLabels()) * h
	case !c.TieWordEmbeddings:
		n += int64(c.VocabSize) * h
	}
	return n
}

// FLOPsPerToken is the multiply-add work (2 FLOPs each) of one token through
// the decoder's matrices, excluding attention scores (which grow with
// context) and the embedding lookup; the folded yes/no head is negligible.
func (c Config) FLOPsPerToken() float64 {
	h, hd := float64(c.HiddenSize), float64(c.HeadDim)
	q, kv := float64(c.NumAttentionHeads)*hd, float64(c.NumKeyValueHeads)*hd
	perLayer := h*q + 2*h*kv + q*h + 3*h*float64(c.IntermediateSize)
	return 2 * perLayer * float64(c.NumHiddenLayers)
}

// LastLayerSkipFLOPs is the matrix work a token skips in the last layer
// when only its keys and values are needed (every token but a sequence's
// last, for a reranker that scores the last position): the query and
// output projections and the MLP, 2 FLOPs per multiply-add.
func (c Config) LastLayerSkipFLOPs() float64 {
	h := float64(c.HiddenSize)
	q := float64(c.NumAttentionHeads) * float64(c.HeadDim)
	return 2 * (2*h*q + 3*h*float64(c.IntermediateSize))
}

// AttentionFLOPs is the extra work of attention scores and weighted values
// for a sequence of n tokens with causal masking (n(n+1)/2 query-key pairs).
func (c Config) AttentionFLOPs(n int) float64 {
	pairs := float64(n) * float64(n+1) / 2
	return 2 * 2 * pairs * float64(c.NumAttentionHeads*c.HeadDim) * float64(c.NumHiddenLayers)
}

// sizeLimits bound config.json's sizes far above every published model,
// so that a hostile value is refused before anything is allocated for it.
var sizeLimits = map[string]int{
	"hidden_size":         1 << 16,
	"num_hidden_layers":   1 << 10,
	"num_attention_heads": 1 << 10,
	"num_key_value_heads": 1 << 10,
	"head_dim":            1 << 12,
	"intermediate_size":   1 << 18,
	"vocab_size":          1 << 22,
	"type_vocab_size":     1 << 10,
	// max_position_embeddings: BGE-M3's is 8194.
	"max_position_embeddings": 1 << 20,
}
