package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// Decode turns ids back into text. Byte-level tokens are mapped back to
// bytes and the whole byte string is read as UTF-8 with each maximal invalid
// subsequence replaced by U+FFFD (Rust's from_utf8_lossy, which the reference
// uses), so decoding a prefix that ends inside a character gives a trailing
// U+FFFD, as there. With skipSpecial, added tokens marked special are left
// out. An id outside the vocabulary is an error (the reference drops it
// silently, which hides bugs).
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) (string, error) {
	if t.pipe != nil {
		return t.pipe.decode(t, ids, skipSpecial)
	}
	buf := make([]byte, 0, len(ids)*4)
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			return "", fmt.Errorf("decode: id %d out of range [0, %d)", id, len(t.tokens))
		}
		if skipSpecial && t.IsSpecial(id) {
			continue
		}
		buf = t.appendTokenBytes(buf, t.tokens[id])
	}
	return lossyUTF8(buf), nil
}

// appendTokenBytes maps a token's characters back to bytes. A token with a
// character outside the byte-level alphabet (an added token with a space,
// say) is taken as plain text, as the reference's ByteLevel decoder does.
func (t *Tokenizer) appendTokenBytes(buf []byte, tok string) []byte {
	start := len(buf)
	for _, r := range tok {
		b, ok := t.charByte[r]
		if !ok {
			return append(buf[:start], tok...)
		}
		buf = append(buf, b)
	}
	return buf
}

// lossyUTF8 replaces each maximal invalid subsequence with U+FFFD, following
// the Unicode "maximal subpart" practice that Rust's from_utf8_lossy uses.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, w := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || w > 1 {
			out = append(out, b[i:i+w]...)
			i += w
			continue
		}
		out = append(out, "\uFFFD"...)
		i += maximalSubpart(b[i:])
	}
	return string(out)
}

// maximalSubpart returns the length (>= 1) of the invalid sequence at the
// start of b: a lead byte followed by the continuation bytes that could still
// have completed a valid character.
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if k == 0 && (x < lo || x > hi) || k > 0 && (x < 0x80 || x > 0xBF) {
			break
		}
		n++
	}
	return n
}
