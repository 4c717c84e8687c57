package lexical

// stem applies step 1 of the Porter (1980) stemmer to a lowercase ASCII
// word and returns the stem, reusing w's storage (it may append one byte).
// Step 1 is the "light" part of Porter: plurals (-s, -es, -ies), past tense
// and progressive (-ed, -ing, with the undoubling and e-restoring rules),
// and terminal y→i. So "paints", "painted" and "painting" all become
// "paint", "running" becomes "run", "making" and "makes" become "make".
// Derivational suffixes (-ness, -ation, -ly, ...) are left alone: they
// change meaning more often than inflections do, and over-stemming hurts
// precision in a reranker that sees few documents.
//
// No maintained Go stemming library is available from this project's module
// list, hence this small, self-contained implementation.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	// Step 1a.
	switch {
	case hasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case hasSuffix(w, "ies"):
		w = w[:len(w)-2]
	case hasSuffix(w, "ss"):
	case hasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	// Step 1b.
	switch {
	case hasSuffix(w, "eed"):
		if measure(w[:len(w)-3]) > 0 {
			w = w[:len(w)-1]
		}
	case hasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		w = fixup1b(w[:len(w)-2])
	case hasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		w = fixup1b(w[:len(w)-3])
	}
	// Step 1c.
	if len(w) > 1 && w[len(w)-1] == 'y' && hasVowel(w[:len(w)-1]) {
		w[len(w)-1] = 'i'
	}
	return w
}

// fixup1b is the tail of Porter step 1b after -ed/-ing was removed.
func fixup1b(w []byte) []byte {
	switch {
	case hasSuffix(w, "at"), hasSuffix(w, "bl"), hasSuffix(w, "iz"):
		return append(w, 'e')
	case doubleConsonant(w):
		if c := w[len(w)-1]; c != 'l' && c != 's' && c != 'z' {
			return w[:len(w)-1]
		}
	case measure(w) == 1 && endsCVC(w):
		return append(w, 'e')
	}
	return w
}

func hasSuffix(w []byte, suf string) bool {
	return len(w) >= len(suf) && string(w[len(w)-len(suf):]) == suf
}

// isConsonant reports whether w[i] is a consonant in Porter's sense: any
// letter but a, e, i, o, u, where y counts as a consonant at the start of
// the word or after a vowel, and as a vowel after a consonant.
func isConsonant(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(w, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel→consonant transitions, i.e.
// n in [C](VC)^n[V].
func measure(w []byte) int {
	m := 0
	prevVowel := false
	for i := range w {
		c := isConsonant(w, i)
		if c && prevVowel {
			m++
		}
		prevVowel = !c
	}
	return m
}

func hasVowel(w []byte) bool {
	for i := range w {
		if !isConsonant(w, i) {
			return true
		}
	}
	return false
}

func doubleConsonant(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && isConsonant(w, n-1)
}

// endsCVC reports consonant-vowel-consonant at the end, where the last
// consonant is not w, x or y ("hop" → true, "snow" → false).
func endsCVC(w []byte) bool {
	n := len(w)
	if n < 3 || !isConsonant(w, n-1) || isConsonant(w, n-2) || !isConsonant(w, n-3) {
		return false
	}
	switch w[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}
