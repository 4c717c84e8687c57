package tokenizer

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// aligned is a normalized piece of text that remembers, for each of its
// bytes, which bytes of the original input produced it.
type aligned struct {
	text     string
	identity bool // text equals the input piece; start/end unused
	base     int  // offset of the piece in the input
	// start[i], end[i]: original range of the normalization segment that
	// produced text[i] (absolute offsets).
	start, end []int32
}

// normalize applies NFC to piece (which starts at input offset base). Bytes
// that are not valid UTF-8 become U+FFFD first, one per byte. Pieces that are
// already valid NFC (nearly all real text) are returned without copying.
func normalize(piece string, base int) aligned {
	if utf8.ValidString(piece) && norm.NFC.IsNormalString(piece) {
		return aligned{text: piece, identity: true, base: base}
	}
	// Sanitize, keeping each output byte's source range.
	san := make([]byte, 0, len(piece)+8)
	sStart := make([]int32, 0, len(piece)+8)
	sEnd := make([]int32, 0, len(piece)+8)
	for i := 0; i < len(piece); {
		r, w := utf8.DecodeRuneInString(piece[i:])
		before := len(san)
		if r == utf8.RuneError && w == 1 {
			san = append(san, "\uFFFD"...)
		} else {
			san = append(san, piece[i:i+w]...)
		}
		for range len(san) - before {
			sStart = append(sStart, int32(base+i))
			sEnd = append(sEnd, int32(base+i+w))
		}
		i += w
	}
	// Normalize segment by segment: NFC never looks across a boundary, so the
	// concatenation equals NFC of the whole (the tests check this), and each
	// output byte maps to the segment it came from. A string Go finds already
	// normal is normal for the reference too (its older tables only block
	// more), so the fast path above stays exact.
	out := aligned{base: base}
	buf := make([]byte, 0, len(san))
	s := string(san)
	for i := 0; i < len(s); {
		n := norm.NFC.NextBoundaryInString(s[i:], true)
		if n <= 0 {
			n = len(s) - i
		}
		before := len(buf)
		buf = appendNFCRef(buf, s[i:i+n])
		lo, hi := sStart[i], sEnd[i+n-1]
		for range len(buf) - before {
			out.start = append(out.start, lo)
			out.end = append(out.end, hi)
		}
		i += n
	}
	out.text = string(buf)
	return out
}

// span maps the normalized byte range [s, e) back to the input, widened to
// whole characters.
func (a *aligned) span(s, e int) Offset {
	if !a.identity {
		return Offset{int(a.start[s]), int(a.end[e-1])}
	}
	for s > 0 && !utf8.RuneStart(a.text[s]) {
		s--
	}
	for e < len(a.text) && !utf8.RuneStart(a.text[e]) {
		e++
	}
	return Offset{a.base + s, a.base + e}
}

func firstRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
