package tokenizer

import (
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// appendNFCRef appends NFC(s) as the reference computes it: the characters
// the reference's normalization tables lack (refNormUnknown, derived and
// checked code point by code point in TestRefChars) are hard boundaries
// passed through unchanged. Each part is
// normalized on its own: norm's Append functions re-normalize across the end
// of dst, which would reach back over such a boundary.
func appendNFCRef(dst []byte, s string) []byte {
	for {
		k := strings.IndexFunc(s, isRefStarter)
		if k < 0 {
			return append(dst, norm.NFC.String(s)...)
		}
		dst = append(dst, norm.NFC.String(s[:k])...)
		_, w := firstRune(s[k:])
		dst = append(dst, s[k:k+w]...)
		s = s[k+w:]
	}
}

func isRefStarter(r rune) bool {
	_, found := slices.BinarySearch(refNormUnknown, r)
	return found
}
