package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pipeline holds the stages of a non-BPE tokenizer.json (Unigram, WordPiece).
// Each stage is a closed set of types the loader checked; anything else was
// refused at load, so encode never meets a stage it approximates.
type pipeline struct {
	norms []normStep
	meta  *metaspace // Metaspace pre-tokenizer, or
	bert  bool       // BertPreTokenizer; neither: none
	model interface {
		encode(word string, ids []int) ([]int, error)
	}
	wpDecoder *wpDecoder // WordPiece decoder; nil: Metaspace (or none)
	post      *postProcessor
	added     []pipeAdded
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

// metaspace replaces spaces with the replacement character, prepends one
// by its scheme and splits before each replacement (MergedWithNext).
type metaspace struct {
	repl    string
	prepend string // "always", "first", "never"
	split   bool
}

// words appends the pre-tokenized words of one normalized segment; first
// reports whether the segment starts the input (the "first" scheme).
func (m *metaspace) words(s string, first bool, dst []string) []string {
	s = strings.ReplaceAll(s, " ", m.repl)
	if (m.prepend == "always" || (m.prepend == "first" && first)) && !strings.HasPrefix(s, m.repl) {
		s = m.repl + s
	}
	if !m.split {
		return append(dst, s)
	}
	start := 0
	for i := len(m.repl); i <= len(s)-len(m.repl); {
		if strings.HasPrefix(s[i:], m.repl) {
			dst = append(dst, s[start:i])
			start = i
			i += len(m.repl)
			continue
		}
		i++
	}
	if start < len(s) {
		dst = append(dst, s[start:])
	}
	return dst
}

// split cuts text at added tokens, leftmost-longest; an lstrip (rstrip)
// token also takes the white space before (after) it.
func (p *pipeline) split(text string) []segment {
	var out []segment
	plain := 0
	for i := 0; i < len(text); {
		best := -1
		for k, a := range p.added {
			if strings.HasPrefix(text[i:], a.content) && (best < 0 || len(a.content) > len(p.added[best].content)) {
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
func (p *pipeline) encode(text string, ids []int) ([]int, error) {
	text = validUTF8(text)
	var words []string
	for _, seg := range p.split(text) {
		if seg.added >= 0 {
			ids = append(ids, p.added[seg.added].id)
			continue
		}
		s := text[seg.start:seg.end]
		for _, n := range p.norms {
			s = n.apply(s)
		}
		words = words[:0]
		if p.meta != nil {
			if s == "" {
				continue
			}
			words = p.meta.words(s, seg.start == 0, words)
		} else if p.bert {
			words = bertWords(s, words)
		} else if s != "" {
			words = append(words, s)
		}
		var err error
		for _, w := range words {
			if ids, err = p.model.encode(w, ids); err != nil {
				return ids, fmt.Errorf("encode: %w", err)
			}
		}
	}
	return ids, nil
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
