package api

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Inputs is the texts of an embedding or tokenize request: one JSON string
// or an array of strings. An array of token ids (OpenAI accepts them) is
// decoded with TokenIDs set so the server can refuse it by name; pairs
// ([a, b] elements, for /tokenize) are kept in Pairs.
type Inputs struct {
	Texts []string
	// Single is true when the JSON was one string, not an array.
	Single bool
	// TokenIDs is true when the JSON held numbers (token ids) instead of text.
	TokenIDs bool
	// Pairs holds the two-string elements of an array ([query, document]).
	Pairs map[int][2]string
	// Set is true when the field was present and not null.
	Set bool
}

// UnmarshalJSON accepts a string, an array of strings (or of [a, b] string
// pairs), and notes arrays of token ids.
func (in *Inputs) UnmarshalJSON(b []byte) error {
	*in = Inputs{}
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*in = Inputs{Texts: []string{s}, Single: true, Set: true}
		return nil
	case len(b) > 0 && b[0] == '[':
	default:
		return &InputsError{Msg: "want a string or an array of strings"}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	in.Set = true
	in.Texts = make([]string, len(raw))
	for i, r := range raw {
		r = bytes.TrimSpace(r)
		switch {
		case len(r) > 0 && r[0] == '"':
			if err := json.Unmarshal(r, &in.Texts[i]); err != nil {
				return err
			}
		case len(r) > 0 && (r[0] == '-' || (r[0] >= '0' && r[0] <= '9')):
			in.TokenIDs = true
		case len(r) > 0 && r[0] == '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(r, &elems); err != nil {
				return err
			}
			var pair [2]string
			if len(elems) == 2 && json.Unmarshal(elems[0], &pair[0]) == nil && json.Unmarshal(elems[1], &pair[1]) == nil {
				if in.Pairs == nil {
					in.Pairs = map[int][2]string{}
				}
				in.Pairs[i] = pair
				continue
			}
			if len(elems) > 0 && bytes.TrimSpace(elems[0])[0] != '"' && bytes.TrimSpace(elems[0])[0] != '[' {
				in.TokenIDs = true
				continue
			}
			return &InputsError{Msg: fmt.Sprintf("element %d: want a string or a [string, string] pair", i)}
		default:
			return &InputsError{Msg: fmt.Sprintf("element %d: want a string", i)}
		}
	}
	return nil
}

// MarshalJSON writes one string when Single, else an array.
func (in Inputs) MarshalJSON() ([]byte, error) {
	if in.Single && len(in.Texts) == 1 {
		return json.Marshal(in.Texts[0])
	}
	if in.Texts == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(in.Texts)
}

// InputsError is a malformed input/inputs field.
type InputsError struct{ Msg string }

func (e *InputsError) Error() string { return e.Msg }

// EmbeddingsRequest is the body of POST /v1/embeddings (OpenAI's API).
type EmbeddingsRequest struct {
	// Input is a string or an array of strings (token-id arrays are refused).
	Input Inputs `json:"input"`
	// Model names the model; see the server's --strict-model-name.
	Model string `json:"model,omitempty"`
	// EncodingFormat is "float" (default) or "base64" (little-endian float32).
	EncodingFormat string `json:"encoding_format,omitempty"`
	// Dimensions asks for shorter (Matryoshka) vectors, where the model has them.
	Dimensions *int `json:"dimensions,omitempty"`
	// User is accepted and ignored.
	User string `json:"user,omitempty"`
	// InputType (rerankd's extension) is "document" (default: the
	// prompt memories are stored with) or "query" (the query prompt the
	// memory search uses).
	InputType string `json:"input_type,omitempty"`
}

// Vector is one embedding: floats, or base64 of little-endian float32 when
// Base64 is set. It decodes from either form.
type Vector struct {
	Values []float32
	Base64 bool
}

// MarshalJSON writes the floats or their base64 string.
func (v Vector) MarshalJSON() ([]byte, error) {
	if v.Base64 {
		buf := make([]byte, 4*len(v.Values))
		for i, x := range v.Values {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		return json.Marshal(base64.StdEncoding.EncodeToString(buf))
	}
	if v.Values == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(v.Values)
}

// UnmarshalJSON reads an array of numbers or a base64 string.
func (v *Vector) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return err
		}
		if len(raw)%4 != 0 {
			return errors.New("base64 embedding: length is not a multiple of 4 bytes")
		}
		v.Values, v.Base64 = make([]float32, len(raw)/4), true
		for i := range v.Values {
			v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return nil
	}
	v.Base64 = false
	return json.Unmarshal(b, &v.Values)
}

// Embedding is one element of an EmbeddingsResponse.
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding Vector `json:"embedding"`
}

// EmbeddingUsage counts the tokens a request took (prompts included).
type EmbeddingUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// EmbeddingsResponse answers POST /v1/embeddings.
type EmbeddingsResponse struct {
	Object string         `json:"object"` // "list"
	Data   []Embedding    `json:"data"`
	Model  string         `json:"model"` // the model that answered
	Usage  EmbeddingUsage `json:"usage"`
}

// TEIEmbedRequest is the body of POST /embed (text-embeddings-inference).
type TEIEmbedRequest struct {
	// Inputs is a string or an array of strings.
	Inputs Inputs `json:"inputs"`
	// Normalize scales vectors to unit length (default true).
	Normalize *bool `json:"normalize,omitempty"`
	// Truncate cuts too-long inputs instead of refusing them (default false).
	Truncate *bool `json:"truncate,omitempty"`
	// TruncationDirection is "Right" (default: the end is cut) or "Left".
	TruncationDirection string `json:"truncation_direction,omitempty"`
	// PromptName names a prompt of the model folder's
	// config_sentence_transformers.json ("query", "document", ...).
	PromptName *string `json:"prompt_name,omitempty"`
	// Dimensions asks for shorter (Matryoshka) vectors, where the model has them.
	Dimensions *int `json:"dimensions,omitempty"`
}

// OpenAIError is the error body on OpenAI-compatible routes
// (/v1/embeddings, /v1/models).
type OpenAIError struct {
	Error OpenAIErrorDetail `json:"error"`
}

// OpenAIErrorDetail is OpenAI's error object.
type OpenAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ModelList answers GET /v1/models.
type ModelList struct {
	Object string      `json:"object"` // "list"
	Data   []ModelCard `json:"data"`
}

// ModelCard is one served model name.
type ModelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// Root is the model's first served name (aliases share it).
	Root string `json:"root"`
	// Task is "rerank" or "embed".
	Task string `json:"task"`
	// MaxModelLen is the longest input in tokens.
	MaxModelLen int `json:"max_model_len,omitempty"`
}

// TokenizeRequest is the body of POST /tokenize: TEI's inputs (strings or
// [query, document] pairs) or vLLM's prompt.
type TokenizeRequest struct {
	Model  string  `json:"model,omitempty"`
	Inputs Inputs  `json:"inputs"`
	Prompt *string `json:"prompt,omitempty"`
	// AddSpecialTokens applies the model's template (default true): the
	// tokens the model is run on.
	AddSpecialTokens *bool `json:"add_special_tokens,omitempty"`
	// PromptName (embedder) places a folder prompt before each text.
	PromptName *string `json:"prompt_name,omitempty"`
}

// Token is one token of a TEI-style /tokenize answer.
type Token struct {
	ID   int    `json:"id"`
	Text string `json:"text"` // "" where the tokenizer cannot say`
}

// TokenizeResponse answers a vLLM-style /tokenize (prompt).
type TokenizeResponse struct {
	Count       int    `json:"count"`
	MaxModelLen int    `json:"max_model_len"`
	Tokens      []int  `json:"tokens"`
	Model       string `json:"model"`
}
