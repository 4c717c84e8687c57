package folder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The Qwen3-Embedding input format, as published with the model: a query
// is "Instruct: {task}\nQuery:{query}" (no space after "Query:"), a
// document is its text alone, and the tokenizer appends <|endoftext|> to
// every input (its tokenizer.json post-processor is a TemplateProcessing
// "$A <|endoftext|>"; the official code pools the hidden state there).
const (
	// DefaultEmbedInstruction is the task of the model card's examples.
	DefaultEmbedInstruction = "Given a web search query, retrieve relevant passages that answer the query"
	// EndOfText is the token appended when the tokenizer declares no
	// template of its own (Qwen tokenizers of reranker releases).
	EndOfText = "<|endoftext|>"
)

// QueryPrefix returns the text placed before a query for instruction.
func QueryPrefix(instruction string) string { return "Instruct: " + instruction + "\nQuery:" }

// Sentence-transformers files: a Qwen3-Embedding folder's prompts and
// pooling, a causal-LM CrossEncoder's score module and default prompt.
const (
	STConfigFile  = "config_sentence_transformers.json"
	STModulesFile = "modules.json"
	STPoolingFile = "1_Pooling/config.json"
)

// TokenTemplate is what a tokenizer's post-processor adds around one
// input: special-token ids before and after it.
type TokenTemplate struct {
	Prefix, Suffix []int
}

// parsePostProcessor reads the post_processor of a tokenizer.json. It
// returns ok=false when there is none or it adds nothing (ByteLevel only
// fixes offsets). A TemplateProcessing, alone or inside a Sequence, gives
// the special tokens around the single-input template "[S…] $A [S…]"; the
// ids come from its special_tokens table.
func parsePostProcessor(raw json.RawMessage) (TokenTemplate, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return TokenTemplate{}, false, nil
	}
	var p struct {
		Type       string            `json:"type"`
		Processors []json.RawMessage `json:"processors"`
		Single     []struct {
			Sequence     *struct{ ID string } `json:"Sequence"`
			SpecialToken *struct{ ID string } `json:"SpecialToken"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return TokenTemplate{}, false, fmt.Errorf("post_processor: %w", err)
	}
	switch p.Type {
	case "ByteLevel":
		return TokenTemplate{}, false, nil
	case "Sequence":
		var found TokenTemplate
		n := 0
		for i, sub := range p.Processors {
			t, ok, err := parsePostProcessor(sub)
			if err != nil {
				return TokenTemplate{}, false, fmt.Errorf("post_processor sequence item %d: %w", i, err)
			}
			if ok {
				found, n = t, n+1
			}
		}
		if n > 1 {
			return TokenTemplate{}, false, errors.New("post_processor: more than one template in the sequence")
		}
		return found, n == 1, nil
	case "TemplateProcessing":
	default:
		return TokenTemplate{}, false, fmt.Errorf("post_processor %q: only TemplateProcessing (or ByteLevel) is supported", p.Type)
	}
	var t TokenTemplate
	seen := 0
	for i, piece := range p.Single {
		switch {
		case piece.Sequence != nil && piece.SpecialToken == nil:
			if piece.Sequence.ID != "A" {
				return TokenTemplate{}, false, fmt.Errorf("post_processor single template item %d: sequence %q, want A", i, piece.Sequence.ID)
			}
			seen++
		case piece.SpecialToken != nil && piece.Sequence == nil:
			st, ok := p.SpecialTokens[piece.SpecialToken.ID]
			if !ok || len(st.IDs) == 0 {
				return TokenTemplate{}, false, fmt.Errorf("post_processor: special token %q has no ids in special_tokens", piece.SpecialToken.ID)
			}
			for _, id := range st.IDs {
				if id < 0 {
					return TokenTemplate{}, false, fmt.Errorf("post_processor: special token %q has id %d", piece.SpecialToken.ID, id)
				}
			}
			if seen == 0 {
				t.Prefix = append(t.Prefix, st.IDs...)
			} else {
				t.Suffix = append(t.Suffix, st.IDs...)
			}
		default:
			return TokenTemplate{}, false, fmt.Errorf("post_processor single template item %d: want one Sequence or SpecialToken", i)
		}
	}
	if seen != 1 {
		return TokenTemplate{}, false, fmt.Errorf("post_processor single template has %d input sequences, want 1", seen)
	}
	return t, len(t.Prefix)+len(t.Suffix) > 0, nil
}

// ReadPostProcessor parses the post_processor of the tokenizer.json at path.
func ReadPostProcessor(path string) (TokenTemplate, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TokenTemplate{}, false, fmt.Errorf("tokenizer template: %w", err)
	}
	v, err := topLevelValues(data, "post_processor")
	if err != nil {
		return TokenTemplate{}, false, fmt.Errorf("tokenizer template %s: %w", path, err)
	}
	t, ok, err := parsePostProcessor(v["post_processor"].raw)
	if err != nil {
		return TokenTemplate{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return t, ok, nil
}

// jsonMember is one member of a JSON object: its raw value and the byte
// range [start, end) the value occupies in the document.
type jsonMember struct {
	raw        json.RawMessage
	start, end int64
}

// topLevelValues returns the named members of the JSON object in data,
// decoding members one at a time and stopping once all are found. A
// tokenizer.json is ~11 MB, nearly all of it the "model" member, which
// Hugging Face writes after added_tokens and post_processor: reading them
// costs microseconds instead of a second parse of the whole file.
func topLevelValues(data []byte, keys ...string) (map[string]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, found %v", tok)
	}
	out := map[string]jsonMember{}
	for dec.More() && len(out) < len(keys) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %q: %w", key, err)
		}
		if slices.Contains(keys, key) {
			end := dec.InputOffset()
			out[key] = jsonMember{raw: v, start: end - int64(len(v)), end: end}
		}
	}
	return out, nil
}

// STSettings is what rerankd takes from a folder's sentence-transformers
// files: the prompts and the pooling, which must be last-token.
type STSettings struct {
	QueryPrompt, DocPrompt string
	HasQuery, HasDoc       bool
	// Prompts is every named prompt of the file ("query" and "document"
	// included), for requests that name one.
	Prompts    map[string]string
	PoolingDim int // word_embedding_dimension (0: not given)
}

// parseSTConfig reads config_sentence_transformers.json: its "query" and
// "document" prompts are prepended to queries and documents.
func parseSTConfig(data []byte, s *STSettings) error {
	var c struct {
		Prompts map[string]string `json:"prompts"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: %w", STConfigFile, err)
	}
	s.Prompts = c.Prompts
	s.QueryPrompt, s.HasQuery = c.Prompts["query"]
	s.DocPrompt, s.HasDoc = c.Prompts["document"]
	return nil
}

// parsePooling reads 1_Pooling/config.json and refuses any pooling other
// than last-token: a mean- or CLS-pooled model run with last-token pooling
// would give vectors that look fine and retrieve badly.
func parsePooling(data []byte, s *STSettings) error {
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: %w", STPoolingFile, err)
	}
	var modes []string
	for k, v := range c {
		if on, ok := v.(bool); ok && on && strings.HasPrefix(k, "pooling_mode_") {
			modes = append(modes, strings.TrimPrefix(k, "pooling_mode_"))
		}
	}
	if len(modes) != 1 || modes[0] != "lasttoken" {
		return fmt.Errorf("%s: pooling modes %v: rerankd runs last-token pooling (Qwen3-Embedding) only", STPoolingFile, modes)
	}
	if d, ok := c["word_embedding_dimension"].(float64); ok {
		if d < 1 || d != float64(int(d)) {
			return fmt.Errorf("%s: word_embedding_dimension %v", STPoolingFile, d)
		}
		s.PoolingDim = int(d)
	}
	return nil
}

// ReadSTSettings reads the optional sentence-transformers files of dir.
func ReadSTSettings(dir string) (STSettings, error) {
	return readST(dir, parsePooling)
}

// ReadSTPrompts is ReadSTSettings for an encoder embedding model, whose
// pooling ReadEncoderPooling reads: the prompts only.
func ReadSTPrompts(dir string) (STSettings, error) { return readST(dir, nil) }

func readST(dir string, pooling func([]byte, *STSettings) error) (STSettings, error) {
	var s STSettings
	var errs []error
	for _, f := range []struct {
		name  string
		parse func([]byte, *STSettings) error
	}{{STConfigFile, parseSTConfig}, {STPoolingFile, pooling}} {
		if f.parse == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.name)))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		default:
			errs = append(errs, f.parse(data, &s))
		}
	}
	return s, errors.Join(errs...)
}
