package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// readUnigramVocab reads [[piece, score], ...] with a scanner of that one
// shape: a general JSON decoder spent most of a 250k-piece load on tokens
// and one allocation per piece. The pieces are slices of one string (one
// allocation for all of them); a piece with escapes is unquoted by
// jsontext, which also refuses what the reference's parser refuses (lone
// surrogates, control characters, invalid UTF-8).
func readUnigramVocab(raw []byte) ([]string, []float64, error) {
	pieces, scores, n, err := scanUnigramVocab(raw)
	if err != nil {
		return nil, nil, err
	}
	s := vocabScanner{b: raw, i: n}
	if s.skipSpace(); s.i != len(s.b) {
		return nil, nil, fmt.Errorf("unexpected data after the array at byte %d", s.i)
	}
	return pieces, scores, nil
}

// scanUnigramVocab reads the array at the start of raw and reports how many
// bytes it took.
func scanUnigramVocab(raw []byte) ([]string, []float64, int, error) {
	s := vocabScanner{b: raw}
	if !s.byte('[') {
		return nil, nil, 0, errors.New("not an array")
	}
	// Every entry ends in ']' (a piece may hold more): a tight bound that
	// keeps the slices from regrowing.
	guess := bytes.Count(raw, []byte{']'})
	scores := make([]float64, 0, guess)
	// A span is a piece's bytes in raw, or (esc) in unquoted.
	type span struct {
		start, end int32
		esc        bool
	}
	spans := make([]span, 0, guess)
	var unquoted []byte
	total := 0
	if !s.peek(']') {
		for {
			n := len(spans)
			if !s.byte('[') {
				return nil, nil, 0, fmt.Errorf("entry %d: not a [piece, score] array", n)
			}
			start, end, esc, err := s.str(&unquoted)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("entry %d: piece: %w", n, err)
			}
			sp := span{int32(start), int32(end), esc}
			spans = append(spans, sp)
			total += end - start
			piece := func() []byte {
				if esc {
					return unquoted[start:end]
				}
				return raw[start:end]
			}
			if !s.byte(',') {
				return nil, nil, 0, fmt.Errorf("entry %d (%q): want a score after the piece", n, piece())
			}
			score, err := s.number()
			if err != nil {
				return nil, nil, 0, fmt.Errorf("entry %d (%q): score: %w", n, piece(), err)
			}
			scores = append(scores, score)
			if !s.byte(']') {
				return nil, nil, 0, fmt.Errorf("entry %d (%q): want ] after the score", n, piece())
			}
			if s.byte(',') {
				continue
			}
			if s.byte(']') {
				break
			}
			return nil, nil, 0, fmt.Errorf("entry %d: want , or ] after it", n)
		}
	} else {
		s.byte(']')
	}
	var b strings.Builder
	b.Grow(total)
	for _, sp := range spans {
		if sp.esc {
			b.Write(unquoted[sp.start:sp.end])
		} else {
			b.Write(raw[sp.start:sp.end])
		}
	}
	all := b.String()
	pieces := make([]string, len(spans), len(spans)+8)
	at := 0
	for i, sp := range spans {
		n := int(sp.end - sp.start)
		pieces[i] = all[at : at+n]
		at += n
	}
	return pieces, scores, s.i, nil
}

type vocabScanner struct {
	b []byte
	i int
}

func (s *vocabScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *vocabScanner) peek(c byte) bool {
	s.skipSpace()
	return s.i < len(s.b) && s.b[s.i] == c
}

// byte consumes c (after white space) if it is next.
func (s *vocabScanner) byte(c byte) bool {
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// str reads the next JSON string: its value is b[start:end], or, when it
// has escapes (esc), (*unq)[start:end] after unquoting.
func (s *vocabScanner) str(unq *[]byte) (start, end int, esc bool, err error) {
	if !s.byte('"') {
		return 0, 0, false, errors.New("not a string")
	}
	start = s.i
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			if !utf8.Valid(s.b[start:i]) {
				return 0, 0, false, errors.New("invalid UTF-8")
			}
			s.i = i + 1
			return start, i, false, nil
		case c == '\\':
			return s.escaped(unq, start-1)
		case c < ' ':
			return 0, 0, false, fmt.Errorf("control character %#x in a string", c)
		}
	}
	return 0, 0, false, errors.New("unterminated string")
}

// escaped unquotes the string that opens at quote.
func (s *vocabScanner) escaped(unq *[]byte, quote int) (start, end int, esc bool, err error) {
	e := quote + 1
	for e < len(s.b) && s.b[e] != '"' {
		if s.b[e] == '\\' {
			e++
		}
		e++
	}
	if e >= len(s.b) {
		return 0, 0, false, errors.New("unterminated string")
	}
	s.i = e + 1
	start = len(*unq)
	*unq, err = jsontext.AppendUnquote(*unq, s.b[quote:e+1])
	return start, len(*unq), true, err
}

// number reads a JSON number; strconv alone would also take forms JSON
// does not (inf, hex, underscores).
func (s *vocabScanner) number() (float64, error) {
	s.skipSpace()
	start, i := s.i, s.i
	digits := func() bool {
		j := i
		for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s.b) && s.b[i] == '-' {
		i++
	}
	if i < len(s.b) && s.b[i] == '0' {
		i++
	} else if !digits() {
		return 0, errors.New("not a number")
	}
	if i < len(s.b) && s.b[i] == '.' {
		i++
		if !digits() {
			return 0, errors.New("no digits after the point")
		}
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, errors.New("no digits in the exponent")
		}
	}
	s.i = i
	v, err := strconv.ParseFloat(string(s.b[start:i]), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.b[start:i], err)
	}
	return v, nil
}
