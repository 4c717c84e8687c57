package lexical

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"golang.org/x/text/unicode/norm"
)

// maxTermBytes caps the length of one term. Longer words (base64 blobs,
// URLs without punctuation, a megabyte of "aaaa") are truncated at a rune
// boundary: they still count as one token but cannot blow up map keys.
const maxTermBytes = 64

// scratch is one analysis pass's working memory, reused for every
// document of a Score call so that only the stemmer and the segmenter
// allocate. Not safe for concurrent use.
type scratch struct {
	an   *Analyzer
	word [maxTermBytes + 8]byte // +8: stems may be longer than the word
	cjk  [maxTermBytes]byte
	env  *snowballstem.Env // the stemmer's state, reused between words
}

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
//     turned into terms by the Analyzer's CJKMode.
//  5. Snowball English (Porter2) stemming for all-ASCII-letter words that
//     are not stopwords; other words are only lowercased.
func (s *scratch) analyze(text string, emit func(term []byte, stop bool)) {
	if !isASCII(text) && !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	var (
		wordBuf  = s.word[:]
		word     = wordBuf[:0]
		asciiAZ  = true // word is only a-z (stemmable)
		overflow bool   // word reached maxTermBytes; drop further runes
		cjkStart = -1   // byte offset of the current CJK run, -1 if none
		cjkEnd   int
		cjkHan   bool // the run is all Han: a Chinese dictionary applies
	)
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		stop := isStopword(word)
		if asciiAZ && !stop {
			word = s.stem(word)
		}
		emit(word, stop)
		word, asciiAZ, overflow = wordBuf[:0], true, false
	}
	flushCJK := func() {
		if cjkStart >= 0 {
			s.cjkRun(text[cjkStart:cjkEnd], cjkHan, emit)
			cjkStart = -1
		}
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
		start := i
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
			if cjkStart < 0 {
				cjkStart, cjkHan = start, true
			}
			cjkEnd = i
			cjkHan = cjkHan && unicode.Is(unicode.Han, r)
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

// cjkRun emits the terms of one run of CJK characters (run is valid UTF-8
// and non-empty) according to the mode. han reports that every character
// is Han, the only runs the Chinese dictionary is used for: runs with kana
// or Hangul (Japanese, Korean), and one-character runs, get the n-grams of
// the mode's dictionary-free counterpart.
func (s *scratch) cjkRun(run string, han bool, emit func([]byte, bool)) {
	mode := s.an.mode
	if !mode.usesGse() || !han || utf8.RuneCountInString(run) == 1 {
		s.ngrams(run, mode.unigrams(), true, emit)
		return
	}
	var words []string
	switch mode {
	case CJKGse:
		words = s.an.seg.CutSearch(run)
	case CJKGseBigram:
		s.ngrams(run, false, true, emit)
		words = s.an.seg.CutSearch(run)
	case CJKGseUnigram:
		s.ngrams(run, true, false, emit)
		words = s.an.seg.Cut(run)
	}
	for _, w := range words {
		if w == "" || s.emitted(mode, w) {
			continue
		}
		emitCJK(emit, append(s.cjk[:0], truncate(w)...))
	}
}

// emitted reports whether word w is already among the n-grams the mode
// emitted for its run; emitting it again would count it twice.
func (s *scratch) emitted(mode CJKMode, w string) bool {
	n := utf8.RuneCountInString(w)
	return (mode == CJKGseBigram && n == 2) || (mode == CJKGseUnigram && n == 1)
}

// ngrams emits the characters of run as unigrams and/or overlapping
// bigrams, interleaved in text order. A one-character run is emitted once
// as itself whatever is asked, so it is never lost and never doubled.
func (s *scratch) ngrams(run string, unigrams, bigrams bool, emit func([]byte, bool)) {
	prev, prevSize := utf8.DecodeRuneInString(run)
	if prevSize == len(run) {
		emitCJK(emit, append(s.cjk[:0], run...))
		return
	}
	if unigrams {
		emitCJK(emit, append(s.cjk[:0], run[:prevSize]...))
	}
	for _, r := range run[prevSize:] {
		if bigrams {
			emitCJK(emit, utf8.AppendRune(utf8.AppendRune(s.cjk[:0], prev), r))
		}
		if unigrams {
			emitCJK(emit, utf8.AppendRune(s.cjk[:0], r))
		}
		prev = r
	}
}

// emitCJK emits a term of a CJK run, flagged when it is a Chinese
// stopword (so queries drop it, as they drop English ones).
func emitCJK(emit func([]byte, bool), term []byte) { emit(term, isZhStopword(term)) }

// truncate cuts w to at most maxTermBytes at a rune boundary.
func truncate(w string) string {
	if len(w) <= maxTermBytes {
		return w
	}
	cut := maxTermBytes
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// stem returns the Snowball English (Porter2) stem of a lowercase a-z
// word, reusing w's storage when the stem fits.
func (s *scratch) stem(w []byte) []byte {
	if s.env == nil {
		s.env = snowballstem.NewEnv("")
	}
	s.env.SetCurrent(string(w))
	english.Stem(s.env)
	return append(w[:0], s.env.Current()...)
}

// isCJK reports whether r belongs to a script written without spaces
// between words, whose runs the CJKMode turns into terms. The prolonged
// sound marks and the ideographic iteration mark are in the Common script
// but are written inside Japanese/Chinese words.
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
