package tokenizer

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// The reference clusters graphemes with Unicode 16 rules; rivo/uniseg has
// Unicode 15.0. The only differences on any character after "a" and on
// any character Python's Unicode 14 tables lack before "a"
// (testdata/components/graphemes-ref.json, scripts/tokenizer/components/
// graphemes.sh; TestRefGraphemes) are marks assigned since, which attach to
// what precedes them (Extend, SpacingMark), and two prefixes, which attach
// to what follows (Prepend).
var (
	refExtendNew = []rune{
		0x0897, 0x10D69, 0x10D6A, 0x10D6B, 0x10D6C, 0x10D6D, 0x10EFC, 0x113B8,
		0x113B9, 0x113BA, 0x113BB, 0x113BC, 0x113BD, 0x113BE, 0x113BF, 0x113C0,
		0x113C2, 0x113C5, 0x113C7, 0x113C8, 0x113C9, 0x113CA, 0x113CC, 0x113CD,
		0x113CE, 0x113CF, 0x113D0, 0x113D2, 0x113E1, 0x113E2, 0x11F5A, 0x1611E,
		0x1611F, 0x16120, 0x16121, 0x16122, 0x16123, 0x16124, 0x16125, 0x16126,
		0x16127, 0x16128, 0x16129, 0x1612A, 0x1612B, 0x1612C, 0x1612D, 0x1612E,
		0x1612F, 0x1E5EE, 0x1E5EF,
	}
	refPrependNew = []rune{0x113D1}
)

// refGraphemes calls fn with each extended grapheme cluster of s as the
// reference forms them: uniseg's, a cluster that starts with a mark of
// refExtendNew joined to the one before and one that ends with a prefix of
// refPrependNew joined to the one after, unless the other side is a
// control, CR or LF (GB4, GB5).
func refGraphemes(s string, fn func(string)) {
	g := uniseg.NewGraphemes(s)
	start, end := -1, 0
	for g.Next() {
		from, to := g.Positions()
		if start >= 0 {
			first, _ := utf8.DecodeRuneInString(s[from:])
			last, _ := utf8.DecodeLastRuneInString(s[start:end])
			if (isIn(refExtendNew, first) && !isGraphemeControl(last)) || (isIn(refPrependNew, last) && !isGraphemeControl(first)) {
				end = to
				continue
			}
			fn(s[start:end])
		}
		start, end = from, to
	}
	if start >= 0 {
		fn(s[start:end])
	}
}

func isIn(list []rune, r rune) bool {
	_, ok := slices.BinarySearch(list, r)
	return ok
}

// isGraphemeControl: Grapheme_Cluster_Break Control, CR or LF.
func isGraphemeControl(r rune) bool {
	if r == 0x200C || r == 0x200D {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Cf)
}
