package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// This file accounts for every key of an encoder's config.json, as
// keys.go does for the decoders: used (EncoderConfig's fields), refused
// unless the value means the default, harmless, or unknown (a warning).

// encoderUsedKeys are the JSON names of EncoderConfig's fields.
var encoderUsedKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[EncoderConfig]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// EncoderHarmlessKeys are encoder config.json keys that cannot change an
// inference forward pass, with the reason (beyond HarmlessKeys).
var EncoderHarmlessKeys = map[string]string{
	"hidden_dropout_prob":          "dropout is off at inference",
	"attention_probs_dropout_prob": "dropout is off at inference",
	"classifier_dropout":           "dropout is off at inference",
	"gradient_checkpointing":       "a training memory saving",
	"chunk_size_feed_forward":      "computes the MLP in chunks with the same numbers",
	"tie_word_embeddings":          "ties the masked-LM head, which rerankd never runs",
	"cls_token_id":                 "a tokenizer id; the graph takes ids",
	"sep_token_id":                 "a tokenizer id; the graph takes ids",
	"finetuning_task":              "provenance",
	"output_past":                  "a generation option",
	"return_dict":                  "the Python return type",
	"output_hidden_states":         "the Python return type",
	"output_attentions":            "the Python return type",
	"directionality":               "not read by transformers' BertModel",
	"pooler_fc_size":               "not read by transformers' BertModel",
	"pooler_num_attention_heads":   "not read by transformers' BertModel",
	"pooler_num_fc_layers":         "not read by transformers' BertModel",
	"pooler_size_per_head":         "not read by transformers' BertModel",
	"pooler_type":                  "not read by transformers' BertModel",
}

// encoderCheckedKeys change the computation unless their value means the
// default; checkEncoderKeys judges each.
var encoderCheckedKeys = []string{"auto_map", "is_decoder", "add_cross_attention", "quantization_config", "num_labels"}

// ReadEncoderConfig reads and validates an encoder's config.json
// (ParseEncoderConfig); the error names the file.
func ReadEncoderConfig(path string) (EncoderConfig, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return EncoderConfig{}, nil, fmt.Errorf("config: %w", err)
	}
	c, warns, err := ParseEncoderConfig(data)
	if err != nil {
		return EncoderConfig{}, warns, fmt.Errorf("config %s: %w", path, err)
	}
	return c, warns, nil
}

// ParseEncoderConfig decodes and validates an encoder's config.json bytes.
// Keys transformers defaults when absent take BertConfig's and
// XLMRobertaConfig's defaults (hidden_act "gelu", layer_norm_eps 1e-12,
// type_vocab_size 2, max_position_embeddings 512, pad_token_id 0 for BERT
// and 1 for XLM-R, position_embedding_type "absolute"); the sizes must be
// given. Every problem is reported at once; unknown keys are warnings.
func ParseEncoderConfig(data []byte) (EncoderConfig, []string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return EncoderConfig{}, nil, err
	}
	c := EncoderConfig{HiddenAct: "gelu", LayerNormEps: 1e-12, TypeVocabSize: 2, MaxPositionEmbeddings: 512, PositionEmbeddingType: "absolute"}
	decodeErr := json.Unmarshal(data, &c)
	if c.PadTokenID == nil {
		pad := 0
		if c.Family() == FamilyXLMR {
			pad = 1
		}
		c.PadTokenID = &pad
	}
	warns, errs := checkEncoderKeys(&c, keys)
	if decodeErr != nil {
		errs = append([]error{decodeErr}, errs...)
	} else if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return EncoderConfig{}, warns, err
	}
	return c, warns, nil
}

func checkEncoderKeys(c *EncoderConfig, keys map[string]json.RawMessage) (warns []string, errs []error) {
	refuse := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	present := func(k string) (json.RawMessage, bool) {
		v, ok := keys[k]
		return v, ok && !isNull(v)
	}
	// auto_map means trust_remote_code: the repository's own Python, not
	// transformers' class, computes the model.
	if v, ok := present("auto_map"); ok {
		if isJinaV2(keys) {
			refuse("jina-reranker-v2 is not supported: its auto_map %s names custom XLM-R code (packed Wqkv, renamed norms, flash attention) that rerankd does not implement", short(v))
		} else {
			refuse("auto_map %s is not supported: the model runs its own code (trust_remote_code), not transformers' %s", short(v), strings.Join(c.Architectures, ", "))
		}
	}
	for _, k := range []string{"is_decoder", "add_cross_attention"} {
		if v, ok := present(k); ok {
			if b, isBool := boolean(v); !isBool || b {
				refuse("%s %s is not supported (rerankd runs bidirectional encoders without cross-attention)", k, short(v))
			}
		}
	}
	if v, ok := present("quantization_config"); ok {
		refuse("quantization_config %s is not supported (rerankd reads unquantised weights only)", short(v))
	}
	// num_labels is not written by transformers (id2label carries it), but
	// some tools write it: it must agree, or stand in for an absent id2label.
	if v, ok := present("num_labels"); ok {
		n, isInt := integer(v)
		switch {
		case !isInt || n < 1:
			refuse("num_labels %s: want a positive integer", short(v))
		case len(c.ID2Label) == 0 && len(c.Label2ID) == 0:
			c.ID2Label = map[string]string{}
			for i := range int(n) {
				c.ID2Label[strconv.Itoa(i)] = "LABEL_" + strconv.Itoa(i)
			}
		case int(n) != c.NumLabels():
			refuse("num_labels %d disagrees with id2label's %d labels", int(n), c.NumLabels())
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if encoderUsedKeys[k] || slices.Contains(encoderCheckedKeys, k) {
			continue
		}
		if _, ok := HarmlessKeys[k]; ok {
			continue
		}
		if _, ok := EncoderHarmlessKeys[k]; ok {
			continue
		}
		warns = append(warns, fmt.Sprintf("config.json key %q ignored: rerankd neither uses it nor knows it to be harmless; check that it does not change the model", k))
	}
	return warns, errs
}

// isJinaV2 recognises jina-reranker-v2's config: an auto_map into jinaai's
// XLM-R code, or its repository name.
func isJinaV2(keys map[string]json.RawMessage) bool {
	s := strings.ToLower(string(keys["auto_map"]) + string(keys["_name_or_path"]))
	return strings.Contains(s, "jina-reranker-v2") || strings.Contains(s, "jinaai/")
}

// EncoderModelType reads only model_type and architectures of a
// config.json, to tell an encoder checkpoint from a decoder one before
// either parser judges its fields.
func EncoderModelType(data []byte) (encoder bool, err error) {
	var head struct {
		Architectures []string `json:"architectures"`
		ModelType     string   `json:"model_type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return false, err
	}
	if head.ModelType == FamilyBERT || head.ModelType == FamilyXLMR {
		return true, nil
	}
	return slices.ContainsFunc(head.Architectures, IsEncoderArchitecture), nil
}

// WriteEncoderConfig writes c as indented JSON (honoured keys only, so it
// loads without warnings).
func WriteEncoderConfig(path string, c EncoderConfig) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
