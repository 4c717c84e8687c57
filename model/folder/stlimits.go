package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rerankd/rerankd/tokenizer"
)

// STBertConfigFile is sentence-transformers' Transformer module config:
// its max_seq_length is the most tokens (special tokens included) the
// model's inputs are cut to.
const STBertConfigFile = "sentence_bert_config.json"

// MaxSeqLengthLimit bounds max_seq_length as arch bounds
// max_position_embeddings: far above every published model, so a hostile
// value is refused by name instead of sizing anything.
const MaxSeqLengthLimit = 1 << 20

// Where an input limit came from (InputLimit.Source).
const (
	SourceMaxSeqLength   = STBertConfigFile + " max_seq_length"
	SourceModelMaxLength = tokenizer.ConfigFileName + " model_max_length"
	SourcePositions      = "config.json max_position_embeddings"
)

// InputLimit is the most tokens of one input, as sentence-transformers'
// Transformer module settles it, and where that number came from.
type InputLimit struct {
	Tokens int
	// Source names the file and field (SourceMaxSeqLength, ...).
	Source string
	// Capped is set when the file's number was beyond the model's
	// positions and Tokens is the positions instead (Stated keeps it).
	Capped bool
	Stated int
}

// String says the limit and its source, as /info and the log print it.
func (l InputLimit) String() string {
	if l.Capped {
		return fmt.Sprintf("%d tokens: the model's positions (config.json max_position_embeddings), below %s's %d", l.Tokens, l.Source, l.Stated)
	}
	return fmt.Sprintf("%d tokens, from %s", l.Tokens, l.Source)
}

// ReadMaxSeqLength reads max_seq_length from dir's sentence_bert_config.json:
// ok is false when the file or the field is absent (or null). A value
// that is not an integer in 1..MaxSeqLengthLimit is an error naming the
// file and the field.
func ReadMaxSeqLength(dir string) (n int, ok bool, err error) {
	path := filepath.Join(dir, STBertConfigFile)
	v, err := readNumber(path, "max_seq_length")
	switch {
	case err != nil || v == nil:
		return 0, false, err
	case *v < 1 || *v > MaxSeqLengthLimit || *v != math.Trunc(*v):
		return 0, false, fmt.Errorf("%s: max_seq_length %v: want an integer in 1..%d", path, *v, MaxSeqLengthLimit)
	}
	return int(*v), true, nil
}

// readModelMaxLength reads model_max_length from dir's
// tokenizer_config.json: ok is false when absent, or at least
// MaxSeqLengthLimit (transformers writes 1e30 for "no limit"). Zero or
// less is an error.
func readModelMaxLength(dir string) (n int, ok bool, err error) {
	path := filepath.Join(dir, tokenizer.ConfigFileName)
	v, err := readNumber(path, "model_max_length")
	switch {
	case err != nil || v == nil || *v >= MaxSeqLengthLimit:
		return 0, false, err
	case *v < 1 || *v != math.Trunc(*v):
		return 0, false, fmt.Errorf("%s: model_max_length %v: want a positive integer", path, *v)
	}
	return int(*v), true, nil
}

// readNumber reads the top-level number field of the JSON object in the
// file at path: nil when the file or the field is absent (or null).
func readNumber(path, field string) (*float64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, ok := fields[field]
	if !ok {
		return nil, nil
	}
	var v *float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, field, err)
	}
	return v, nil
}

// ReadInputLimit returns an encoder model's input limit by
// sentence-transformers' rule (Transformer.__init__): max_seq_length from
// sentence_bert_config.json when given; else the smaller of config.json's
// max_position_embeddings (maxPositionEmbeddings) and the tokenizer's
// model_max_length; else max_position_embeddings. The result is then held
// to the tokens the position embeddings cover (positions: XLM-R's 514
// rows hold 512 tokens), where the reference would index past its table.
func ReadInputLimit(dir string, maxPositionEmbeddings, positions int) (InputLimit, error) {
	l := InputLimit{Tokens: maxPositionEmbeddings, Source: SourcePositions}
	if n, ok, err := ReadMaxSeqLength(dir); err != nil {
		return InputLimit{}, err
	} else if ok {
		l = InputLimit{Tokens: n, Source: SourceMaxSeqLength}
	} else if n, ok, err := readModelMaxLength(dir); err != nil {
		return InputLimit{}, err
	} else if ok && n < l.Tokens {
		l = InputLimit{Tokens: n, Source: SourceModelMaxLength}
	}
	switch {
	case l.Source == SourcePositions:
		l.Tokens = positions
	case l.Tokens > positions:
		l.Capped, l.Stated, l.Tokens = true, l.Tokens, positions
	}
	return l, nil
}
