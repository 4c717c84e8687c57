package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Character classes of the split pattern. \s is Unicode White_Space (the
// reference's regex engine is Unicode-aware; Go's regexp \s is ASCII-only).
const (
	clsOther = iota
	clsLetter
	clsNumber
	clsSpace
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = classOf(rune(c))
	}
	return t
}()

func classOf(r rune) uint8 {
	switch {
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.Is(unicode.White_Space, r):
		return clsSpace
	}
	return clsOther
}

// next decodes the rune at s[i] and its class. s is valid UTF-8 here
// (normalize replaced invalid bytes).
func next(s string, i int) (rune, int, uint8) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, asciiClass[c]
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, w, classOf(r)
}

type span struct{ start, end int }

// splitWords appends to dst the pieces of s cut by QwenSplitPattern with
// Isolated behaviour. The pattern's alternatives are tried in order at each
// position, with the same greedy-then-backtrack outcome a backtracking regex
// engine gives; the comments quote the alternative each branch implements.
// Every character is matched by some alternative, so the pieces tile s.
func splitWords(s string, dst []span) []span {
	for i := 0; i < len(s); {
		end := matchAt(s, i)
		dst = append(dst, span{i, end})
		i = end
	}
	return dst
}

func matchAt(s string, i int) int {
	r, w, cls := next(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d): ASCII letters only; the reference does
	// not fold 'ſ' (U+017F) to 's' here.
	if r == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cls == clsLetter {
		return letterRun(s, i+w)
	}
	if r != '\r' && r != '\n' && cls != clsNumber && i+w < len(s) {
		if _, w2, c2 := next(s, i+w); c2 == clsLetter {
			return letterRun(s, i+w+w2)
		}
	}
	// \p{N}
	if cls == clsNumber {
		return i + w
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j := i
	if r == ' ' {
		j++
	}
	if j < len(s) {
		if _, _, c := next(s, j); c == clsOther {
			for j < len(s) {
				_, w, c := next(s, j)
				if c != clsOther {
					break
				}
				j += w
			}
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	// r is whitespace here: every other class returned above.
	// Find the whitespace run, its last \r or \n, and its last rune.
	runEnd, lastNL, lastStart := i, -1, i
	for runEnd < len(s) {
		r, w, c := next(s, runEnd)
		if c != clsSpace {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = runEnd
		}
		lastStart = runEnd
		runEnd += w
	}
	// \s*[\r\n]+ : greedy \s* backs off to the last newline.
	if lastNL >= 0 {
		return lastNL + 1
	}
	// \s+(?!\S) : the whole run at the end of text, else all but its last
	// character (which must then be followed by whitespace: itself).
	if runEnd == len(s) {
		return runEnd
	}
	if lastStart > i {
		return lastStart
	}
	// \s+
	return runEnd
}

// contraction returns the length of s's prefix matching s|t|re|ve|m|ll|d
// case-insensitively (ASCII), or 0.
func contraction(s string) int {
	lower := func(k int) byte {
		if k >= len(s) {
			return 0
		}
		return s[k] | 0x20 // ASCII letters only; other bytes never match below
	}
	switch lower(0) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if lower(1) == 'e' {
			return 2
		}
	case 'l':
		if lower(1) == 'l' {
			return 2
		}
	}
	return 0
}

func letterRun(s string, j int) int {
	for j < len(s) {
		_, w, c := next(s, j)
		if c != clsLetter {
			break
		}
		j += w
	}
	return j
}
