package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/go-json-experiment/json/jsontext"
)

// modelType reads model.type without decoding the vocabulary, to route a
// file to the BPE loader (unchanged) or the pipeline loader.
func modelType(data []byte) string {
	d := jsontext.NewDecoder(bytes.NewBuffer(data), decoderOpts...)
	typ := ""
	errFound := errors.New("found")
	_ = readObject(d, func(name string) error {
		if name != "model" {
			return d.SkipValue()
		}
		err := readObject(d, func(field string) error {
			if field != "type" {
				return d.SkipValue()
			}
			tok, err := d.ReadToken()
			if err != nil {
				return err
			}
			typ = tok.String()
			return errFound
		})
		if errors.Is(err, errFound) {
			return errFound
		}
		return err
	})
	return typ
}

type pipeFileJSON struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		Lstrip     bool   `json:"lstrip"`
		Rstrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    *pipeComponent  `json:"normalizer"`
	PreTokenizer  *pipeComponent  `json:"pre_tokenizer"`
	PostProcessor *pipeComponent  `json:"post_processor"`
	Decoder       *pipeComponent  `json:"decoder"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	Model         struct {
		Type         string          `json:"type"`
		UnkID        *int            `json:"unk_id"`
		Vocab        json.RawMessage `json:"vocab"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkToken     string          `json:"unk_token"`
		Prefix       *string         `json:"continuing_subword_prefix"`
		MaxChars     *int            `json:"max_input_chars_per_word"`
	} `json:"model"`
}

type pipeComponent struct {
	Type                string          `json:"type"`
	Normalizers         []pipeComponent `json:"normalizers"`
	Pretokenizers       []pipeComponent `json:"pretokenizers"`
	PrecompiledCharsmap *string         `json:"precompiled_charsmap"`
	Left                bool            `json:"left"`
	Right               bool            `json:"right"`
	Pattern             *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Content       string          `json:"content"`
	CleanText     *bool           `json:"clean_text"`
	ChineseChars  *bool           `json:"handle_chinese_chars"`
	StripAccents  *bool           `json:"strip_accents"`
	Lowercase     *bool           `json:"lowercase"`
	Prefix        *string         `json:"prefix"`
	Cleanup       *bool           `json:"cleanup"`
	Replacement   string          `json:"replacement"`
	PrependScheme *string         `json:"prepend_scheme"`
	AddPrefix     *bool           `json:"add_prefix_space"`
	Split         *bool           `json:"split"`
	Sep           json.RawMessage `json:"sep"`
	Cls           json.RawMessage `json:"cls"`
	Single        []templateItem  `json:"single"`
	Pair          []templateItem  `json:"pair"`
	SpecialTokens map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
}

type templateItem struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"Sequence"`
}

// pipelineFromBytes builds a Unigram tokenizer. Every component outside the
// reproduced set is refused with the field that names it.
func pipelineFromBytes(data []byte) (*Tokenizer, error) {
	f, err := parsePipeFile(data)
	if err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(f.Truncation) > 0 && string(f.Truncation) != "null" {
		bad("truncation: set in the file; pass the length to EncodePair instead")
	}
	if len(f.Padding) > 0 && string(f.Padding) != "null" {
		bad("padding: set in the file; not supported")
	}
	p := &pipeline{}
	var pieces []string
	switch f.Model.Type {
	case "Unigram":
		pieces, errs = unigramFrom(p, f, errs)
	case "WordPiece":
		pieces, errs = wordPieceFrom(p, f, errs)
	}
	if f.Normalizer != nil {
		p.norms, errs = appendNorms(p.norms, *f.Normalizer, "normalizer", errs)
	}
	if pt := f.PreTokenizer; pt != nil {
		if pt.Type == "Sequence" && len(pt.Pretokenizers) == 1 {
			pt = &pt.Pretokenizers[0]
		}
		if pt.Type == "BertPreTokenizer" {
			p.bert = true
		} else if m, err := metaspaceFrom(*pt); err != nil {
			bad("pre_tokenizer: %v", err)
		} else {
			p.meta = m
		}
	}
	if d := f.Decoder; d != nil {
		switch d.Type {
		case "Metaspace":
		case "WordPiece":
			p.wpDecoder = &wpDecoder{prefix: "##", cleanup: true}
			if d.Prefix != nil {
				p.wpDecoder.prefix = *d.Prefix
			}
			if d.Cleanup != nil {
				p.wpDecoder.cleanup = *d.Cleanup
			}
		default:
			bad("decoder %q: only Metaspace and WordPiece are supported", d.Type)
		}
	}
	t := &Tokenizer{addedByID: map[int]int{}, pipe: p, tokens: pieces}
	switch m := p.model.(type) {
	case *unigram:
		t.pieceID = m.trie.lookup
	case *wordPiece:
		t.vocab = m.vocab
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.Normalized {
			bad("added_tokens %q: single_word/normalized are not supported", a.Content)
		}
		if a.ID < 0 || a.ID >= len(t.tokens)+1 || a.Content == "" {
			bad("added_tokens %q: id %d out of range or empty content", a.Content, a.ID)
			continue
		}
		if a.ID == len(t.tokens) {
			t.tokens = append(t.tokens, a.Content)
		}
		at := addedToken{content: a.Content, id: a.ID, special: a.Special}
		t.addedByID[a.ID] = len(t.added)
		t.added = append(t.added, at)
		p.added = append(p.added, pipeAdded{addedToken: at, lstrip: a.Lstrip, rstrip: a.Rstrip})
	}
	if pp := f.PostProcessor; pp != nil {
		if p.post, err = postProcessorFrom(*pp, t); err != nil {
			bad("post_processor: %v", err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

func appendNorms(dst []normStep, c pipeComponent, field string, errs []error) ([]normStep, []error) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(field+": "+format, a...)) }
	switch c.Type {
	case "Sequence":
		for i, n := range c.Normalizers {
			dst, errs = appendNorms(dst, n, fmt.Sprintf("%s.normalizers[%d]", field, i), errs)
		}
	case "Precompiled":
		if c.PrecompiledCharsmap == nil || *c.PrecompiledCharsmap == "" {
			// The reference then leaves the text as it is.
			return dst, errs
		}
		pc, err := newPrecompiled(*c.PrecompiledCharsmap)
		if err != nil {
			bad("%v", err)
			return dst, errs
		}
		dst = append(dst, normStep{pre: pc})
	case "BertNormalizer":
		b := &bertNormalizer{clean: true, chinese: true, lower: true}
		if c.CleanText != nil {
			b.clean = *c.CleanText
		}
		if c.ChineseChars != nil {
			b.chinese = *c.ChineseChars
		}
		if c.Lowercase != nil {
			b.lower = *c.Lowercase
		}
		// null follows lowercase, as the reference.
		b.strip = b.lower
		if c.StripAccents != nil {
			b.strip = *c.StripAccents
		}
		dst = append(dst, normStep{bert: b})
	case "Strip":
		dst = append(dst, normStep{strip: true, stripLeft: c.Left, stripRight: c.Right})
	case "Replace":
		switch {
		case c.Pattern == nil:
			bad("Replace without a pattern")
		case c.Pattern.String != nil:
			if *c.Pattern.String == "" {
				bad("Replace with an empty string pattern")
			}
			dst = append(dst, normStep{replace: true, old: *c.Pattern.String, repl: c.Content})
		case c.Pattern.Regex != nil:
			re, err := replaceRegex(*c.Pattern.Regex)
			if err != nil {
				bad("Replace pattern %q: %v", *c.Pattern.Regex, err)
				return dst, errs
			}
			dst = append(dst, normStep{replace: true, re: re, repl: c.Content})
		default:
			bad("Replace pattern has neither String nor Regex")
		}
	default:
		bad("type %q is not supported", c.Type)
	}
	return dst, errs
}

// replaceRegex accepts only patterns whose meaning is the same in Go's
// RE2 and the reference's Oniguruma: literal characters, classes of
// literals and counted repetition. Shorthand classes (\s, \w, \d, \b)
// differ (ASCII in Go) and lookaround does not exist in Go, so they are
// refused rather than approximated.
var safeRegex = regexp.MustCompile(`^(?:[^\\()|.^$]|\\[.\\ {}\[\]()|+*?^$-])*$`)

func replaceRegex(pat string) (*regexp.Regexp, error) {
	if !safeRegex.MatchString(pat) {
		return nil, errors.New("only literal characters, [classes] and repetition are supported")
	}
	return regexp.Compile(pat)
}

func metaspaceFrom(c pipeComponent) (*metaspace, error) {
	if c.Type != "Metaspace" {
		return nil, fmt.Errorf("type %q is not supported with Unigram (only Metaspace)", c.Type)
	}
	m := &metaspace{repl: c.Replacement, prepend: "always", split: true}
	if m.repl == "" {
		return nil, errors.New("metaspace: replacement is empty")
	}
	if c.PrependScheme != nil {
		m.prepend = *c.PrependScheme
	} else if c.AddPrefix != nil && !*c.AddPrefix {
		m.prepend = "never"
	}
	switch m.prepend {
	case "always", "first", "never":
	default:
		return nil, fmt.Errorf("metaspace: prepend_scheme %q is not one of always, first, never", m.prepend)
	}
	if c.Split != nil {
		m.split = *c.Split
	}
	return m, nil
}

func unigramFrom(p *pipeline, f *pipeFileJSON, errs []error) ([]string, []error) {
	pieces, scores, err := readUnigramVocab(f.Model.Vocab)
	if err != nil {
		return nil, append(errs, fmt.Errorf("model.vocab: want [[piece, score], ...]: %w", err))
	}
	u, err := newUnigram(pieces, scores, f.Model.UnkID, f.Model.ByteFallback)
	if err != nil {
		return nil, append(errs, err)
	}
	p.model = u
	return pieces, errs
}

func wordPieceFrom(p *pipeline, f *pipeFileJSON, errs []error) ([]string, []error) {
	var vocab map[string]int
	if err := json.Unmarshal(f.Model.Vocab, &vocab); err != nil {
		return nil, append(errs, fmt.Errorf("model.vocab: want {token: id}: %w", err))
	}
	pieces := make([]string, len(vocab))
	for tok, id := range vocab {
		if id < 0 || id >= len(vocab) || pieces[id] != "" {
			return nil, append(errs, fmt.Errorf("model.vocab %q: id %d repeated or outside [0, %d)", tok, id, len(vocab)))
		}
		pieces[id] = tok
	}
	prefix, maxChars := "##", 100
	if f.Model.Prefix != nil {
		prefix = *f.Model.Prefix
	}
	if f.Model.MaxChars != nil {
		maxChars = *f.Model.MaxChars
	}
	w, err := newWordPiece(vocab, f.Model.UnkToken, prefix, maxChars)
	if err != nil {
		return nil, append(errs, err)
	}
	p.model = w
	return pieces, errs
}

// parsePipeFile decodes tokenizer.json with the vocabulary left raw: the
// small fields go through encoding/json, the vocabulary is scanned once by
// its own reader (through encoding/json the whole file took ~0.5 s).
func parsePipeFile(data []byte) (*pipeFileJSON, error) {
	f := &pipeFileJSON{}
	top := map[string]any{
		"added_tokens": &f.AddedTokens, "normalizer": &f.Normalizer, "pre_tokenizer": &f.PreTokenizer,
		"post_processor": &f.PostProcessor, "decoder": &f.Decoder, "truncation": &f.Truncation, "padding": &f.Padding,
	}
	model := map[string]any{
		"type": &f.Model.Type, "unk_id": &f.Model.UnkID, "byte_fallback": &f.Model.ByteFallback,
		"unk_token": &f.Model.UnkToken, "continuing_subword_prefix": &f.Model.Prefix,
		"max_input_chars_per_word": &f.Model.MaxChars,
	}
	d := jsontext.NewDecoder(bytes.NewBuffer(data), decoderOpts...)
	err := readObject(d, func(name string) error {
		if name == "model" {
			return readObject(d, func(field string) error {
				raw, err := rawValue(d, data)
				if err != nil {
					return err
				}
				if field == "vocab" {
					f.Model.Vocab = raw
					return nil
				}
				if dst, ok := model[field]; ok {
					return json.Unmarshal(raw, dst)
				}
				return nil
			})
		}
		raw, err := rawValue(d, data)
		if err != nil {
			return err
		}
		if dst, ok := top[name]; ok {
			return json.Unmarshal(raw, dst)
		}
		return nil
	})
	if err == nil {
		err = checkEnd(d)
	}
	return f, err
}
