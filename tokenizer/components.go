package tokenizer

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// preStep is one pre-tokenizer of the sequence: it cuts one piece into
// pieces (empty ones are dropped by the caller, as the reference drops
// them). first reports whether the piece starts the input; only a leading
// Metaspace reads it (see metaspaceFrom).
type preStep interface {
	split(s string, first bool, dst []string) []string
}

// splitBehavior is the reference's SplitDelimiterBehavior.
type splitBehavior int

const (
	splitRemoved splitBehavior = iota
	splitIsolated
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

func parseBehavior(s string) (splitBehavior, error) {
	switch s {
	case "Removed":
		return splitRemoved, nil
	case "Isolated":
		return splitIsolated, nil
	case "MergedWithPrevious":
		return splitMergedWithPrevious, nil
	case "MergedWithNext":
		return splitMergedWithNext, nil
	case "Contiguous":
		return splitContiguous, nil
	}
	return 0, fmt.Errorf("behavior %q is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous", s)
}

// match is a span of the piece and whether the pattern matched it; the
// spans of one piece cover it in order.
type match struct {
	start, end int
	hit        bool
}

// charMatches is the reference's pattern of a character predicate: every
// matching character is a match of its own, the runs between are not.
func charMatches(s string, pred func(rune) bool, dst []match) []match {
	last := 0
	for i, r := range s {
		if pred(r) {
			if last < i {
				dst = append(dst, match{last, i, false})
			}
			n := i + utf8.RuneLen(r)
			dst = append(dst, match{i, n, true})
			last = n
		}
	}
	if last < len(s) {
		dst = append(dst, match{last, len(s), false})
	}
	return dst
}

// regexMatches is the reference's pattern of a regex: its leftmost-first
// non-overlapping matches (never empty: such patterns are refused at load)
// and the gaps between.
func regexMatches(s string, re *regexp.Regexp, dst []match) []match {
	prev := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if prev != m[0] {
			dst = append(dst, match{prev, m[0], false})
		}
		dst = append(dst, match{m[0], m[1], true})
		prev = m[1]
	}
	if prev != len(s) {
		dst = append(dst, match{prev, len(s), false})
	}
	return dst
}

// cut applies behavior to the matches of s (inverted first when invert)
// and appends the non-empty pieces, as NormalizedString::split.
func cut(s string, ms []match, behavior splitBehavior, invert bool, dst []string) []string {
	if invert {
		for i := range ms {
			ms[i].hit = !ms[i].hit
		}
	}
	type span struct{ start, end int }
	var out []span
	prev := false
	switch behavior {
	case splitRemoved:
		for _, m := range ms {
			if !m.hit {
				out = append(out, span{m.start, m.end})
			}
		}
	case splitIsolated:
		for _, m := range ms {
			out = append(out, span{m.start, m.end})
		}
	case splitContiguous:
		for _, m := range ms {
			if m.hit == prev && len(out) > 0 {
				out[len(out)-1].end = m.end
			} else {
				out = append(out, span{m.start, m.end})
			}
			prev = m.hit
		}
	case splitMergedWithPrevious:
		for _, m := range ms {
			if m.hit && !prev && len(out) > 0 {
				out[len(out)-1].end = m.end
			} else {
				out = append(out, span{m.start, m.end})
			}
			prev = m.hit
		}
	case splitMergedWithNext:
		for i := len(ms) - 1; i >= 0; i-- {
			m := ms[i]
			if m.hit && !prev && len(out) > 0 {
				out[len(out)-1].start = m.start
			} else {
				out = append(out, span{m.start, m.end})
			}
			prev = m.hit
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	for _, sp := range out {
		if sp.start < sp.end {
			dst = append(dst, s[sp.start:sp.end])
		}
	}
	return dst
}

// charSplit: WhitespaceSplit, Punctuation, Digits.
type charSplit struct {
	pred     func(rune) bool
	behavior splitBehavior
}

func (c charSplit) split(s string, _ bool, dst []string) []string {
	var buf [16]match
	return cut(s, charMatches(s, c.pred, buf[:0]), c.behavior, false, dst)
}

// regexSplit: Split with a String or Regex pattern.
type regexSplit struct {
	re       *regexp.Regexp
	behavior splitBehavior
	invert   bool
}

func (r regexSplit) split(s string, _ bool, dst []string) []string {
	var buf [16]match
	return cut(s, regexMatches(s, r.re, buf[:0]), r.behavior, r.invert, dst)
}

// whitespaceSplit is the Whitespace pre-tokenizer, the reference's
// `\w+|[^\w\s]+` kept and the rest removed, with its \w and \s.
type whitespaceSplit struct{}

func (whitespaceSplit) split(s string, _ bool, dst []string) []string {
	start, kind := 0, 0 // kind of the current run: 0 none, 1 word, 2 other
	for i, r := range s {
		k := 2
		switch {
		case isRefWord(r):
			k = 1
		case isRefSpace(r):
			k = 0
		}
		if k != kind {
			if kind != 0 {
				dst = append(dst, s[start:i])
			}
			start, kind = i, k
		}
	}
	if kind != 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// bertSplit is BertPreTokenizer.
type bertSplit struct{}

func (bertSplit) split(s string, _ bool, dst []string) []string { return bertWords(s, dst) }

// metaspace replaces spaces with the replacement character, prepends one
// by its scheme and splits before each replacement (MergedWithNext).
type metaspace struct {
	repl    string
	prepend string // "always", "first", "never"
	cutAt   bool   // the file's split: cut before each replacement
}

func (m *metaspace) split(s string, first bool, dst []string) []string { return m.words(s, first, dst) }

// words appends the pre-tokenized words of one piece; first reports whether
// the piece starts the input (the "first" scheme).
func (m *metaspace) words(s string, first bool, dst []string) []string {
	s = strings.ReplaceAll(s, " ", m.repl)
	if (m.prepend == "always" || (m.prepend == "first" && first)) && !strings.HasPrefix(s, m.repl) {
		s = m.repl + s
	}
	if !m.cutAt {
		return append(dst, s)
	}
	start := 0
	for i := 1; i <= len(s)-len(m.repl); {
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

// compileRefRegex compiles a pattern of the reference's Oniguruma (Ruby
// syntax) with Go's RE2, accepting only the constructs both read the same
// way: literal characters and escaped metacharacters, \n \r \t \f \v \a,
// classes of those with ranges and negation, '.', groups, alternation and
// repetition. Shorthand classes (\s \w \d, ASCII in Go, Unicode there),
// \p{..} (tables of other Unicode versions), anchors (line anchors in Ruby
// syntax), lookaround, backreferences, inline flags, nested classes and
// {,n} (a repeat there, a literal in Go) are refused rather than
// approximated. A pattern that can match the empty string is refused too:
// where the two engines resume after an empty match differs.
func compileRefRegex(pat string) (*regexp.Regexp, error) {
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\':
			if i+1 >= len(pat) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if !strings.ContainsRune(`\.+*?()|[]{}^$-/ nrtfva`, rune(pat[i])) {
				return nil, fmt.Errorf("escape \\%c is not supported", pat[i])
			}
		case inClass && c == ']':
			inClass = false
		case inClass && (c == '[' || c == '&' && i+1 < len(pat) && pat[i+1] == '&'):
			return nil, errors.New("nested classes and && in a class are not supported")
		case inClass:
		case c == '[':
			inClass = true
			if i+1 < len(pat) && pat[i+1] == '^' {
				i++
			}
			if i+1 < len(pat) && pat[i+1] == ']' { // a leading ] is a literal in both
				i++
			}
		case c == '(':
			if i+1 < len(pat) && pat[i+1] == '?' {
				if i+2 >= len(pat) || pat[i+2] != ':' {
					return nil, errors.New("only (?:...) groups are supported (no lookaround, flags or named groups)")
				}
				i += 2
			}
		case c == '^' || c == '$':
			return nil, errors.New("anchors are not supported")
		case c == '{' && i+1 < len(pat) && pat[i+1] == ',':
			return nil, errors.New("{,n} is not supported")
		}
	}
	if inClass {
		return nil, errors.New("unterminated class")
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, err
	}
	if re.MatchString("") {
		return nil, errors.New("the pattern matches the empty string")
	}
	return re, nil
}
