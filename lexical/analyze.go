package lexical

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxTermBytes caps the length of one term. Longer words (base64 blobs,
// URLs without punctuation, a megabyte of "aaaa") are truncated at a rune
// boundary: they still count as one token but cannot blow up map keys.
const maxTermBytes = 64

// analyze splits text into index terms and calls emit for each, in order.
// The term slice is only valid during the call. stop reports whether the
// term is an English stopword (such terms are emitted unstemmed).
//
// Steps:
//  1. NFKC normalization (only when the text is not already NFKC), so
//     full-width Latin "ＡＢＣ" equals "ABC" and composed/decomposed accents
//     agree.
//  2. Segmentation with the unicode tables: a word is a maximal run of
//     letters (L*) and numbers (N*), continued by combining marks (M*) and
//     by an apostrophe between two letters ("don't" → "dont"). Everything
//     else, including invalid UTF-8 bytes, separates words.
//  3. Lowercasing (unicode.ToLower).
//  4. Han, Hiragana, Katakana and Hangul characters form their own runs,
//     emitted as overlapping character bigrams ("画画很好" → 画画 画很 很好);
//     a run of one character is emitted as that unigram.
//  5. Porter step-1 stemming for all-ASCII-letter words that are not
//     stopwords; other words are only lowercased.
func analyze(text string, emit func(term []byte, stop bool)) {
	var b buffers
	b.analyze(text, emit)
}

// buffers is analyze's scratch space; one per Score call keeps the
// per-document loop free of allocations. Not safe for concurrent use.
type buffers struct {
	word [maxTermBytes + 8]byte // +8: the stemmer may append an 'e'
	cjk  [2 * utf8.UTFMax]byte
}

func (b *buffers) analyze(text string, emit func(term []byte, stop bool)) {
	if !isASCII(text) && !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	var (
		wordBuf  = b.word[:]
		word     = wordBuf[:0]
		asciiAZ  = true // word is only a-z (stemmable)
		cjkPrev  rune
		cjkRun   int // characters in the current CJK run
		cjkBuf   = b.cjk[:]
		overflow bool // word reached maxTermBytes; drop further runes
	)
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		stop := isStopword(word)
		if asciiAZ && !stop {
			word = stem(word)
		}
		emit(word, stop)
		word, asciiAZ, overflow = wordBuf[:0], true, false
	}
	flushCJK := func() {
		if cjkRun == 1 {
			emit(utf8.AppendRune(cjkBuf[:0], cjkPrev), false)
		}
		cjkRun = 0
	}
	addRune := func(r rune) {
		if overflow || len(word)+utf8.RuneLen(r) > maxTermBytes {
			overflow = true
			return
		}
		if r < 'a' || r > 'z' {
			asciiAZ = false
		}
		word = utf8.AppendRune(word, r)
	}

	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			flushWord()
			flushCJK()
		case r < utf8.RuneSelf:
			// ASCII fast path.
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				flushCJK()
				addRune(r)
			case 'A' <= r && r <= 'Z':
				flushCJK()
				addRune(r + ('a' - 'A'))
			case r == '\'' && len(word) > 0 && nextIsLetter(text[i:]):
				// Join "don't", "o'clock", "john's" (the stemmer then
				// strips the possessive s).
			default:
				flushWord()
				flushCJK()
			}
		case isCJK(r):
			flushWord()
			if cjkRun > 0 {
				b := utf8.AppendRune(cjkBuf[:0], cjkPrev)
				emit(utf8.AppendRune(b, r), false)
			}
			cjkPrev = r
			cjkRun++
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			flushCJK()
			addRune(unicode.ToLower(r))
		case len(word) > 0 && unicode.IsMark(r):
			addRune(r)
		case r == '\u2019' && len(word) > 0 && nextIsLetter(text[i:]):
			// Typographic apostrophe, as above.
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
}

// isCJK reports whether r belongs to a script written without spaces
// between words, for which the analyzer emits character bigrams. The
// prolonged sound marks and the ideographic iteration mark are in the
// Common script but are written inside Japanese/Chinese words.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo: no CJK script
		return false
	}
	switch r {
	case 0x30FC, 0xFF70, 0x3005: // ー, ｰ, 々
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isASCII reports whether s is all ASCII, which is always in NFKC.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func nextIsLetter(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || (r == utf8.RuneError && size == 1) {
		return false
	}
	return unicode.IsLetter(r) && !isCJK(r)
}
