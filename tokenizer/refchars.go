package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Character properties as the reference computes them. Go's unicode and
// golang.org/x/text/unicode/norm follow Unicode 17; the reference's crates
// are older, and each differs on characters assigned since. The exception
// lists below were derived by comparing every code point with the
// reference (testdata/components/unicode-ref.json, written by
// scripts/tokenizer/components/props.js; TestRefChars checks them all).

// isRefPunct: the Punctuation and BertPreTokenizer rule (ASCII punctuation,
// or P* in the reference's unicode_categories tables).
func isRefPunct(r rune) bool { return unicode.Is(refPunctTable, r) }

// isRefWord: \w of the reference's regex crate.
func isRefWord(r rune) bool { return unicode.Is(refWordTable, r) }

// isRefSpace: Rust's char::is_whitespace (White_Space, the same in both).
func isRefSpace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isRefNumeric: Rust's char::is_numeric (Nd, Nl, No; the same in both).
func isRefNumeric(r rune) bool { return unicode.In(r, unicode.Nd, unicode.Nl, unicode.No) }

// isRefMark: the reference's is_combining_mark, which StripAccents removes.
func isRefMark(r rune) bool { return unicode.Is(refMarkTable, r) }

// isRefMn: the reference's is_mark_nonspacing, which BertNormalizer's
// strip_accents removes after NFD.
func isRefMn(r rune) bool { return unicode.Is(refMnTable, r) }

// isRefBertRemoved: what BertNormalizer's clean_text removes (NUL, U+FFFD
// and the reference's "other" categories but tab, newline and return).
func isRefBertRemoved(r rune) bool { return unicode.Is(refCtrlTable, r) }

// appendRefLower appends Rust's char::to_lowercase of r: the full mapping,
// which differs from Go's simple one only for U+0130.
func appendRefLower(dst []byte, r rune) []byte {
	if r == 'İ' {
		return append(dst, "i\u0307"...)
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

func refLower(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = appendRefLower(b, r)
	}
	return string(b)
}

// normForm is one of NFC, NFD, NFKC, NFKD as the reference computes it.
type normForm struct {
	form norm.Form
}

// apply normalizes s with the reference's tables: the characters of
// refNormUnknown are hard boundaries passed through unchanged, as
// characters those tables do not know. Each part is normalized on its own:
// norm's Append functions re-normalize across the end of dst, which would
// reach back over such a boundary.
func (f normForm) apply(s string) string {
	if f.form.IsNormalString(s) && !strings.ContainsFunc(s, f.boundary) {
		return s
	}
	var b []byte
	for {
		k := strings.IndexFunc(s, f.boundary)
		if k < 0 {
			return string(append(b, f.form.String(s)...))
		}
		b = append(b, f.form.String(s[:k])...)
		_, w := utf8.DecodeRuneInString(s[k:])
		b = append(b, s[k:k+w]...)
		s = s[k+w:]
	}
}

func (f normForm) boundary(r rune) bool { return isRefStarter(r) }
