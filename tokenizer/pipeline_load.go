package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/unicode/norm"
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
	// pieces and scores: the vocabulary already read by parsePipeFile.
	pieces      []string
	scores      []float64
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
	StripLeft           *bool           `json:"strip_left"`
	StripRight          *bool           `json:"strip_right"`
	Behavior            *string         `json:"behavior"`
	Invert              *bool           `json:"invert"`
	IndividualDigits    *bool           `json:"individual_digits"`
	Decoders            []pipeComponent `json:"decoders"`
	PrependText         *string         `json:"prepend"`
	Start               *int            `json:"start"`
	Stop                *int            `json:"stop"`
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
		if g := normGrowth(p.norms); g > maxNormGrowth {
			errs = append(errs, fmt.Errorf("normalizer: its Replace steps can make a text %.3gx longer (at most %d allowed): a hostile or broken tokenizer.json", g, maxNormGrowth))
		}
	}
	if pt := f.PreTokenizer; pt != nil {
		p.pre, errs = appendPre(p.pre, *pt, "pre_tokenizer", errs)
	}
	if d := f.Decoder; d != nil {
		p.decoders, errs = appendDecoders(p.decoders, *d, "decoder", errs)
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
		if u, ok := p.model.(*unigram); ok && a.Special {
			u.markControl(a.Content)
		}
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
		if c.StripLeft == nil || c.StripRight == nil {
			bad("Strip needs strip_left and strip_right")
			return dst, errs
		}
		dst = append(dst, normStep{strip: true, stripLeft: *c.StripLeft, stripRight: *c.StripRight})
	case "NFC", "NFD", "NFKC", "NFKD":
		f := map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}[c.Type]
		dst = append(dst, normStep{form: &normForm{f}})
	case "Lowercase":
		dst = append(dst, normStep{lower: true})
	case "StripAccents":
		dst = append(dst, normStep{accents: true})
	case "Prepend":
		if c.PrependText == nil {
			bad("Prepend without prepend")
			return dst, errs
		}
		if *c.PrependText != "" {
			dst = append(dst, normStep{prepend: *c.PrependText})
		}
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

func replaceRegex(pat string) (*regexp.Regexp, error) { return compileRefRegex(pat) }

// appendPre flattens a pre-tokenizer (a Sequence, nested or not) into
// steps. Metaspace's "first" scheme asks whether a piece starts the input
// (its original offset is 0); that is known here only for the whole
// segment, so "first" is accepted only on a Metaspace that comes before
// every other pre-tokenizer.
func appendPre(dst []preStep, c pipeComponent, field string, errs []error) ([]preStep, []error) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(field+": "+format, a...)) }
	behavior := func(def splitBehavior) splitBehavior {
		if c.Behavior == nil {
			return def
		}
		b, err := parseBehavior(*c.Behavior)
		if err != nil {
			bad("%s: %v", c.Type, err)
		}
		return b
	}
	switch c.Type {
	case "Sequence":
		for i, n := range c.Pretokenizers {
			dst, errs = appendPre(dst, n, fmt.Sprintf("%s.pretokenizers[%d]", field, i), errs)
		}
	case "Metaspace":
		m, err := metaspaceFrom(c)
		if err != nil {
			bad("%v", err)
			return dst, errs
		}
		if m.prepend == "first" && len(dst) > 0 {
			bad("Metaspace prepend_scheme \"first\" after another pre-tokenizer is not supported")
		}
		dst = append(dst, m)
	case "BertPreTokenizer":
		dst = append(dst, bertSplit{})
	case "Whitespace":
		dst = append(dst, whitespaceSplit{})
	case "WhitespaceSplit":
		dst = append(dst, charSplit{pred: isRefSpace, behavior: splitRemoved})
	case "Punctuation":
		dst = append(dst, charSplit{pred: isRefPunct, behavior: behavior(splitIsolated)})
	case "Digits":
		if c.IndividualDigits == nil {
			bad("Digits needs individual_digits")
			return dst, errs
		}
		b := splitContiguous
		if *c.IndividualDigits {
			b = splitIsolated
		}
		dst = append(dst, charSplit{pred: isRefNumeric, behavior: b})
	case "Split":
		if c.Behavior == nil || c.Invert == nil || c.Pattern == nil {
			bad("Split needs pattern, behavior and invert")
			return dst, errs
		}
		var re *regexp.Regexp
		var err error
		switch {
		case c.Pattern.String != nil && *c.Pattern.String != "":
			re, err = regexp.Compile(regexp.QuoteMeta(*c.Pattern.String))
		case c.Pattern.String != nil:
			err = errors.New("an empty String pattern matches everywhere")
		case c.Pattern.Regex != nil:
			re, err = compileRefRegex(*c.Pattern.Regex)
		default:
			err = errors.New("pattern has neither String nor Regex")
		}
		if err != nil {
			bad("Split pattern: %v", err)
			return dst, errs
		}
		dst = append(dst, regexSplit{re: re, behavior: behavior(splitRemoved), invert: *c.Invert})
	default:
		bad("type %q is not supported", c.Type)
	}
	return dst, errs
}

func appendDecoders(dst []decodeStep, c pipeComponent, field string, errs []error) ([]decodeStep, []error) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(field+": "+format, a...)) }
	switch c.Type {
	case "Sequence":
		for i, n := range c.Decoders {
			dst, errs = appendDecoders(dst, n, fmt.Sprintf("%s.decoders[%d]", field, i), errs)
		}
	case "Metaspace":
		m, err := metaspaceFrom(c)
		if err != nil {
			bad("%v", err)
			return dst, errs
		}
		dst = append(dst, metaspaceDecoder{repl: m.repl, dropLead: m.prepend != "never"})
	case "WordPiece":
		// Both fields are required by the reference's deserializer.
		if c.Prefix == nil || c.Cleanup == nil {
			bad("WordPiece needs prefix and cleanup")
			return dst, errs
		}
		dst = append(dst, wordPieceDecoder{prefix: *c.Prefix, cleanup: *c.Cleanup})
	case "ByteFallback":
		dst = append(dst, byteFallbackDecoder{})
	case "Fuse":
		dst = append(dst, fuseDecoder{})
	case "Replace":
		d := replaceDecoder{with: c.Content}
		var err error
		switch {
		case c.Pattern == nil:
			err = errors.New("no pattern")
		case c.Pattern.String != nil && *c.Pattern.String != "":
			d.re, err = regexp.Compile(regexp.QuoteMeta(*c.Pattern.String))
		case c.Pattern.Regex != nil:
			d.re, err = compileRefRegex(*c.Pattern.Regex)
		default:
			err = errors.New("an empty or missing pattern")
		}
		if err != nil {
			bad("Replace: %v", err)
			return dst, errs
		}
		dst = append(dst, d)
	case "Strip":
		// The reference indexes past the start of a token made only of the
		// content character when stop exceeds its length (a panic), so only
		// stop 0 is reproduced.
		if c.Start == nil || c.Stop == nil || *c.Start < 0 || utf8.RuneCountInString(c.Content) != 1 {
			bad("Strip needs one content character, start and stop")
			return dst, errs
		}
		if *c.Stop != 0 {
			bad("Strip with stop %d is not supported (only 0)", *c.Stop)
			return dst, errs
		}
		r, _ := utf8.DecodeRuneInString(c.Content)
		dst = append(dst, stripDecoder{content: r, start: *c.Start})
	default:
		bad("type %q is not supported (only Metaspace, WordPiece, ByteFallback, Fuse, Replace, Strip and Sequence)", c.Type)
	}
	return dst, errs
}

// metaspaceFrom reads Metaspace as the reference's deserializer: one
// replacement character, prepend_scheme defaulting to always, the legacy
// add_prefix_space false meaning never (and contradicting any other
// scheme), split defaulting to true.
func metaspaceFrom(c pipeComponent) (*metaspace, error) {
	m := &metaspace{repl: c.Replacement, prepend: "always", cutAt: true}
	if utf8.RuneCountInString(m.repl) != 1 {
		return nil, fmt.Errorf("replacement %q of Metaspace is not one character", m.repl)
	}
	if c.PrependScheme != nil {
		m.prepend = *c.PrependScheme
	}
	switch m.prepend {
	case "always", "first", "never":
	default:
		return nil, fmt.Errorf("prepend_scheme %q of Metaspace is not one of always, first, never", m.prepend)
	}
	if c.AddPrefix != nil && !*c.AddPrefix {
		if m.prepend != "never" && c.PrependScheme != nil {
			return nil, errors.New("add_prefix_space false of Metaspace contradicts prepend_scheme " + m.prepend)
		}
		m.prepend = "never"
	}
	if c.Split != nil {
		m.cutAt = *c.Split
	}
	return m, nil
}

func unigramFrom(p *pipeline, f *pipeFileJSON, errs []error) ([]string, []error) {
	pieces, scores := f.pieces, f.scores
	var err error
	if pieces == nil {
		pieces, scores, err = readUnigramVocab(f.Model.Vocab)
	}
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
//
// A Unigram vocabulary (an array) is most of the file: it is read first by
// its scanner, which also finds where it ends, and the decoder is given the
// file with the array cut out, so the vocabulary is scanned once, not twice
// (~20% of a 250k-piece load).
func parsePipeFile(data []byte) (*pipeFileJSON, error) {
	start, ok := unigramVocabStart(data)
	if !ok {
		return parsePipeJSON(data)
	}
	pieces, scores, n, err := scanUnigramVocab(data[start:])
	if err != nil {
		return parsePipeJSON(data) // the full parse reports the error in its place
	}
	end := start + n
	spliced := make([]byte, 0, len(data)-n+2)
	spliced = append(append(append(spliced, data[:start]...), "[]"...), data[end:]...)
	f, err := parsePipeJSON(spliced)
	if err != nil {
		return f, err
	}
	// The placeholder is the vocabulary unless the model names another
	// after it (a repeated key: the last value is kept, as by the full
	// parse).
	if v := f.Model.Vocab; len(v) == 2 && &v[0] == &spliced[start] {
		f.Model.Vocab = data[start:end]
		f.pieces, f.scores = pieces, scores
	}
	return f, nil
}

// unigramVocabStart is the offset of model.vocab's value when it is an
// array.
func unigramVocabStart(data []byte) (int, bool) {
	d := jsontext.NewDecoder(bytes.NewBuffer(data), decoderOpts...)
	errFound := errors.New("found")
	at := -1
	err := readObject(d, func(name string) error {
		if name != "model" {
			return d.SkipValue()
		}
		return readObject(d, func(field string) error {
			if field != "vocab" || d.PeekKind() != '[' {
				return d.SkipValue()
			}
			at = int(d.InputOffset())
			return errFound
		})
	})
	if !errors.Is(err, errFound) {
		return 0, false
	}
	for at < len(data) && strings.IndexByte(" \t\r\n:", data[at]) >= 0 {
		at++
	}
	return at, at < len(data) && data[at] == '['
}

func parsePipeJSON(data []byte) (*pipeFileJSON, error) {
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

// maxNormGrowth bounds how many times longer the normalizers may make a
// text: real tokenizers stay within a few times (" " → "▁" is 3x); a chain
// of Replace steps that multiplies it would ask for terabytes at the first
// request.
const maxNormGrowth = 256

// normGrowth is the worst-case factor the Replace steps of norms multiply
// a text's length by (a pattern matching at every byte, a string at every
// occurrence of itself).
func normGrowth(norms []normStep) float64 {
	g := 1.0
	for _, n := range norms {
		switch {
		case !n.replace:
		case n.re != nil:
			g *= float64(1 + len(n.repl))
		case len(n.old) > 0:
			g *= max(1, float64(len(n.repl))/float64(len(n.old)))
		}
		if g > 1e18 {
			return g
		}
	}
	return g
}
