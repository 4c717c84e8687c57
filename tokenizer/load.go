package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	sugar "github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretokenizer"
)

// QwenSplitPattern is the pre-tokenizer pattern shared by the Qwen2, Qwen2.5
// and Qwen3 tokenizers. pretokenize.go implements exactly this pattern, so a
// tokenizer.json with any other pattern is refused rather than mis-split.
const QwenSplitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Default file names inside a Hugging Face model folder.
const (
	FileName       = "tokenizer.json"
	ConfigFileName = "tokenizer_config.json"
)

type fileJSON struct {
	AddedTokens  []sugar.TokenConfig `json:"added_tokens"`
	Normalizer   json.RawMessage     `json:"normalizer"`
	PreTokenizer json.RawMessage     `json:"pre_tokenizer"`
	Decoder      json.RawMessage     `json:"decoder"`
	Model        modelJSON           `json:"model"`
}

type modelJSON struct {
	Type                    string   `json:"type"`
	Dropout                 *float64 `json:"dropout"`
	UnkToken                *string  `json:"unk_token"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	ByteFallback            bool     `json:"byte_fallback"`
	IgnoreMerges            bool     `json:"ignore_merges"`
}

// component is the common shape of normalizer, pre-tokenizer and decoder
// entries; only the fields the Qwen pipeline uses are read.
type component struct {
	Type           string      `json:"type"`
	Normalizers    []component `json:"normalizers"`
	Pretokenizers  []component `json:"pretokenizers"`
	Decoders       []component `json:"decoders"`
	Pattern        *struct{ Regex, String *string }
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	UseRegex       *bool  `json:"use_regex"`
}

// configJSON is the part of tokenizer_config.json that names special tokens.
// Token fields are either a string or an object with "content".
type configJSON struct {
	PadToken json.RawMessage `json:"pad_token"`
	EOSToken json.RawMessage `json:"eos_token"`
	BOSToken json.RawMessage `json:"bos_token"`
}

// Load reads a tokenizer from path, which is either a tokenizer.json file or
// a folder holding tokenizer.json. A tokenizer_config.json beside it, when
// present, supplies the pad/eos/bos tokens.
func Load(path string) (*Tokenizer, error) {
	file := tokenizerFile(path)
	data, cfg, err := readFiles(file)
	if err != nil {
		return nil, err
	}
	t, err := FromBytes(data, cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", file, err)
	}
	return t, nil
}

// tokenizerFile is path's tokenizer.json: path itself, or the file of that
// name inside it when path is a folder.
func tokenizerFile(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, FileName)
	}
	return path
}

// slowOnly names the files of folders that ship a tokenizer without
// tokenizer.json; they are not converted (yet), and saying so beats
// "no such file".
var slowOnly = []string{"sentencepiece.bpe.model", "spiece.model", "vocab.txt"}

func missingTokenizerJSON(file string) error {
	dir := filepath.Dir(file)
	for _, name := range slowOnly {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("tokenizer: %s has %s but no %s: only tokenizer.json is read (save one with transformers' tokenizer.save_pretrained)", dir, name, FileName)
		}
	}
	return nil
}

// readFiles reads tokenizer.json and the tokenizer_config.json beside it
// (nil when absent).
func readFiles(file string) (data, cfg []byte, err error) {
	if data, err = os.ReadFile(file); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if e := missingTokenizerJSON(file); e != nil {
				return nil, nil, e
			}
		}
		return nil, nil, fmt.Errorf("tokenizer: %w", err)
	}
	cfg, err = os.ReadFile(filepath.Join(filepath.Dir(file), ConfigFileName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("tokenizer: %w", err)
	}
	return data, cfg, nil
}

// FromBytes builds a tokenizer from the contents of tokenizer.json and,
// optionally (nil), tokenizer_config.json.
func FromBytes(tokenizerJSON, configJSONData []byte) (*Tokenizer, error) {
	if typ := modelType(tokenizerJSON); typ != "" && typ != "BPE" {
		if typ != "Unigram" && typ != "WordPiece" {
			return nil, fmt.Errorf("model type %q: only BPE, Unigram and WordPiece are supported", typ)
		}
		t, err := pipelineFromBytes(tokenizerJSON)
		if err != nil {
			return nil, err
		}
		if len(configJSONData) > 0 {
			if err := t.readConfig(configJSONData); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	f, err := parseFile(tokenizerJSON)
	if err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	return fromParsed(f, configJSONData)
}

func fromParsed(f *parsedFile, configJSONData []byte) (*Tokenizer, error) {
	// Every unsupported feature is reported at once, so a user adapting a
	// file sees the whole list.
	errs := checkPipeline(&f.fileJSON)
	t, buildErrs := build(f)
	errs = append(errs, buildErrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(configJSONData) > 0 {
		if err := t.readConfig(configJSONData); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func checkPipeline(f *fileJSON) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	m := f.Model
	if m.Type != "BPE" {
		bad("model type %q: only BPE is supported", m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		bad("BPE dropout %v is not supported", *m.Dropout)
	}
	if m.ByteFallback {
		bad("BPE byte_fallback is not supported")
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		bad("continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		bad("end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	}
	var norm *component
	if err := unmarshalOptional(f.Normalizer, &norm); err != nil {
		bad("normalizer: %v", err)
	} else if norm != nil && !isNFC(*norm) {
		bad("normalizer %q: only NFC (or none) is supported", norm.Type)
	}
	var pre *component
	if err := unmarshalOptional(f.PreTokenizer, &pre); err != nil {
		bad("pre_tokenizer: %v", err)
	} else if pre == nil || !isQwenPreTokenizer(*pre) {
		bad("pre_tokenizer: only Sequence[Split(Qwen pattern, Isolated), ByteLevel(use_regex=false)] is supported")
	}
	var dec *component
	if err := unmarshalOptional(f.Decoder, &dec); err != nil {
		bad("decoder: %v", err)
	} else if dec == nil || dec.Type != "ByteLevel" {
		bad("decoder: only ByteLevel is supported")
	}
	for _, a := range f.AddedTokens {
		if a.Lstrip || a.Rstrip || a.SingleWord || a.Normalized {
			bad("added token %q: lstrip/rstrip/single_word/normalized are not supported", a.Content)
		}
		if a.Content == "" {
			bad("added token %d has empty content", a.Id)
		}
	}
	return errs
}

func unmarshalOptional(raw json.RawMessage, dst **component) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, dst)
}

func isNFC(c component) bool {
	switch c.Type {
	case "NFC":
		return true
	case "Sequence":
		for _, n := range c.Normalizers {
			if !isNFC(n) {
				return false
			}
		}
		return true
	}
	return false
}

func isQwenPreTokenizer(c component) bool {
	if c.Type != "Sequence" || len(c.Pretokenizers) != 2 {
		return false
	}
	s, b := c.Pretokenizers[0], c.Pretokenizers[1]
	return s.Type == "Split" && s.Pattern != nil && s.Pattern.Regex != nil &&
		*s.Pattern.Regex == QwenSplitPattern && s.Behavior == "Isolated" && !s.Invert &&
		b.Type == "ByteLevel" && b.UseRegex != nil && !*b.UseRegex && !b.AddPrefixSpace
}

// build turns the parsed file into lookup tables.
func build(f *parsedFile) (*Tokenizer, []error) {
	var errs []error
	size := 0
	for tok, id := range f.vocab {
		if id < 0 {
			errs = append(errs, fmt.Errorf("vocab token %q has negative id %d", tok, id))
			continue
		}
		size = max(size, id+1)
	}
	for _, a := range f.AddedTokens {
		if a.Id < 0 || a.Id > 1<<31-1 {
			errs = append(errs, fmt.Errorf("added token %q has id %d out of range", a.Content, a.Id))
			continue
		}
		size = max(size, int(a.Id)+1)
	}
	// Ids must be dense; checking before allocating keeps a hostile file
	// claiming id 1e12 from exhausting memory.
	if n := len(f.vocab) + len(f.AddedTokens); size > n {
		errs = append(errs, fmt.Errorf("largest id %d but only %d tokens: ids must be contiguous from 0", size-1, n))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	t := &Tokenizer{
		tokens:       make([]string, size),
		vocab:        f.vocab,
		addedByID:    map[int]int{},
		charByte:     make(map[rune]byte, 256),
		ignoreMerges: f.Model.IgnoreMerges,
		cache:        newWordCache(defaultCacheEntries),
	}
	for tok, id := range f.vocab {
		if prev := t.tokens[id]; prev != "" {
			// Map order is random: which one would win is not defined.
			errs = append(errs, fmt.Errorf("vocab tokens %q and %q share id %d", min(prev, tok), max(prev, tok), id))
		}
		t.tokens[id] = tok
	}
	if f.mergesErr != nil {
		errs = append(errs, f.mergesErr)
	}
	t.merges = f.merges
	chars := pretokenizer.GenerateBytesChar()
	for b := 0; b < 256; b++ {
		c := chars[uint8(b)]
		t.byteChar[b] = c
		id, ok := f.vocab[c]
		if !ok {
			errs = append(errs, fmt.Errorf("vocab lacks the byte-level token %q for byte 0x%02x", c, b))
		}
		t.byteID[b] = int32(id)
		r := []rune(c)[0]
		t.charByte[r] = byte(b)
	}
	for _, a := range f.AddedTokens {
		id := int(a.Id)
		t.addedByID[id] = len(t.added)
		t.added = append(t.added, addedToken{content: a.Content, id: id, special: a.Special})
		t.tokens[id] = a.Content
	}
	for id, tok := range t.tokens {
		if tok == "" {
			errs = append(errs, fmt.Errorf("id %d has no token (ids must be contiguous)", id))
			break
		}
	}
	t.matcher = newAddedMatcher(t.added)
	return t, errs
}

func (t *Tokenizer) readConfig(data []byte) error {
	var c configJSON
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("parse tokenizer_config.json: %w", err)
	}
	var errs []error
	for _, s := range []struct {
		name string
		raw  json.RawMessage
		dst  *SpecialToken
	}{{"pad_token", c.PadToken, &t.pad}, {"eos_token", c.EOSToken, &t.eos}, {"bos_token", c.BOSToken, &t.bos}} {
		content, err := tokenContent(s.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("tokenizer_config.json %s: %w", s.name, err))
			continue
		}
		if content == "" {
			continue
		}
		id, ok := t.TokenID(content)
		if !ok {
			errs = append(errs, fmt.Errorf("tokenizer_config.json %s %q is not in the vocabulary", s.name, content))
			continue
		}
		*s.dst = SpecialToken{Content: content, ID: id, Set: true}
	}
	return errors.Join(errs...)
}

func tokenContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("want a string or {\"content\": ...}, got %s", raw)
	}
	return obj.Content, nil
}

// sortedByLengthDesc returns indexes of added tokens, longest content first,
// so the matcher finds the longest token at a position first.
func sortedByLengthDesc(added []addedToken) []int {
	idx := make([]int, len(added))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(added[idx[a]].content) > len(added[idx[b]].content) })
	return idx
}
