package tokenizer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pipeline holds the stages of a non-BPE tokenizer.json (Unigram, WordPiece).
// Each stage is a closed set of types the loader checked; anything else was
// refused at load, so encode never meets a stage it approximates.
type pipeline struct {
	norms []normStep
	pre   []preStep // the pre-tokenizers in order (a Sequence flattened)
	model interface {
		encode(word string, ids []int) ([]int, error)
	}
	decoders []decodeStep // nil: tokens joined by spaces, as the reference without a decoder
	post     *postProcessor
	added    []pipeAdded
}

// pipeAdded is an added token with the strip flags the reference honours.
type pipeAdded struct {
	addedToken
	lstrip, rstrip bool
}

// normStep is one normalizer of the sequence, applied in order.
type normStep struct {
	bert       *bertNormalizer
	pre        *precompiled
	form       *normForm // NFC, NFD, NFKC, NFKD
	lower      bool      // Lowercase
	accents    bool      // StripAccents
	prepend    string    // Prepend (non-empty)
	stripLeft  bool
	stripRight bool
	strip      bool
	re         *regexp.Regexp // Replace with a pattern
	old        string         // Replace with a string (re nil)
	repl       string
	replace    bool
}

func (n normStep) apply(s string) string {
	switch {
	case n.bert != nil:
		return n.bert.apply(s)
	case n.pre != nil:
		return n.pre.normalize(s)
	case n.form != nil:
		return n.form.apply(s)
	case n.lower:
		return refLower(s)
	case n.accents:
		return strings.Map(func(r rune) rune {
			if isRefMark(r) {
				return -1
			}
			return r
		}, s)
	case n.prepend != "":
		if s == "" {
			return s
		}
		return n.prepend + s
	case n.strip:
		if n.stripLeft {
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		}
		if n.stripRight {
			s = strings.TrimRightFunc(s, unicode.IsSpace)
		}
		return s
	case n.replace && n.re != nil:
		return n.re.ReplaceAllLiteralString(s, n.repl)
	case n.replace:
		return strings.ReplaceAll(s, n.old, n.repl)
	}
	return s
}

// split cuts text at added tokens, leftmost-longest; an lstrip (rstrip)
// token also takes the white space before (after) it.
func (p *pipeline) split(text string, plainSpans [][2]int) []segment {
	var out []segment
	plain := 0
	for i := 0; i < len(text); {
		best := -1
		for k, a := range p.added {
			if strings.HasPrefix(text[i:], a.content) && (best < 0 || len(a.content) > len(p.added[best].content)) &&
				(!a.special || !overlaps(plainSpans, i, i+len(a.content))) {
				best = k
			}
		}
		if best < 0 {
			i++
			continue
		}
		a := p.added[best]
		start, end := i, i+len(a.content)
		if a.lstrip {
			start = plain + len(strings.TrimRightFunc(text[plain:start], unicode.IsSpace))
		}
		if a.rstrip {
			end = len(text) - len(strings.TrimLeftFunc(text[end:], unicode.IsSpace))
		}
		if plain < start {
			out = append(out, segment{plain, start, -1})
		}
		out = append(out, segment{start, end, best})
		plain, i = end, end
	}
	if plain < len(text) {
		out = append(out, segment{plain, len(text), -1})
	}
	return out
}

// encode appends the ids of text without special tokens.
func (p *pipeline) encode(st *stop, text string, ids []int, plainSpans [][2]int) ([]int, error) {
	text = validUTF8(text) // EncodeIDsUser's parts are valid already: their spans hold
	var words []string
	for _, seg := range p.split(text, plainSpans) {
		if err := st.err(); err != nil {
			return ids, err
		}
		if seg.added >= 0 {
			ids = append(ids, p.added[seg.added].id)
			continue
		}
		s := p.normalize(text[seg.start:seg.end])
		words = p.preTokenize(s, seg.start == 0, words[:0])
		encode := p.model.encode
		if pm, ok := p.model.(interface {
			encodePlain(string, []int) ([]int, error)
		}); ok && overlaps(plainSpans, seg.start, seg.end) {
			encode = pm.encodePlain // a model whose vocabulary holds control pieces (Unigram)
		}
		var err error
		for _, w := range words {
			if err := st.word(); err != nil {
				return ids, err
			}
			if ids, err = encode(w, ids); err != nil {
				return ids, fmt.Errorf("encode: %w", err)
			}
		}
	}
	return ids, nil
}

// normalize runs the normalizers in order.
func (p *pipeline) normalize(s string) string {
	for _, n := range p.norms {
		s = n.apply(s)
	}
	return s
}

// preTokenize appends the words of one normalized segment: each step
// cuts every piece the previous one left, empty pieces dropped.
func (p *pipeline) preTokenize(s string, first bool, words []string) []string {
	if s == "" {
		return words
	}
	words = append(words, s)
	var next []string
	for _, step := range p.pre {
		next = next[:0]
		for k, w := range words {
			next = step.split(w, first && k == 0, next)
		}
		next = slices.DeleteFunc(next, func(w string) bool { return w == "" })
		words, next = next, words
	}
	return words
}

// validUTF8 reads every byte that does not start a valid sequence as
// U+FFFD, the package's rule for invalid input (Go's range loop).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
