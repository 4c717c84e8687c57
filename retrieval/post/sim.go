package post

import (
	"math"
	"unicode"
)

// Similarity returns how alike two candidates are for MMR: the cosine of
// their Vectors when both are present with the same length, else the
// Jaccard index of their lowercase word sets (see Tokens). Cosine is in
// [-1, 1], Jaccard in [0, 1]; neither is ever NaN.
func Similarity(a, b Candidate) float64 {
	if len(a.Vector) > 0 && len(a.Vector) == len(b.Vector) {
		return Cosine(a.Vector, b.Vector)
	}
	return Jaccard(Tokens(a.Text), Tokens(b.Text))
}

// Cosine returns dot(a, b)/(|a||b|), computed in float64 and clamped to
// [-1, 1]. It does not rely on the inputs being normalised. A zero-norm,
// non-finite or length-mismatched pair has similarity 0.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	d := math.Sqrt(na) * math.Sqrt(nb)
	if !(d > 0) || math.IsInf(d, 0) {
		return 0
	}
	s := dot / d
	if math.IsNaN(s) {
		return 0
	}
	return min(max(s, -1), 1)
}

// isCJK reports whether r is written without spaces between words (Han
// ideographs, Hiragana, Katakana), so each such rune is its own token.
// Hangul is spaced and is treated as an ordinary letter.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// Tokens returns the set of lowercase words of s. A word is a maximal run
// of letters, digits and combining marks; each Han, Hiragana or Katakana
// character is a token by itself. Everything else separates words.
func Tokens(s string) map[string]struct{} {
	set := make(map[string]struct{})
	word := make([]rune, 0, 16)
	flush := func() {
		if len(word) > 0 {
			set[string(word)] = struct{}{}
			word = word[:0]
		}
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flush()
			set[string(unicode.ToLower(r))] = struct{}{}
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return set
}

// Jaccard returns |a ∩ b| / |a ∪ b|, and 0 when both sets are empty
// (nothing in common to be redundant about).
func Jaccard(a, b map[string]struct{}) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for t := range a {
		if _, ok := b[t]; ok {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}
