package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordPiece is BERT's greedy longest-match-first model: a word longer than
// maxChars characters, or one with a part no piece matches, is the unknown
// token as a whole.
type wordPiece struct {
	vocab    map[string]int
	prefix   string
	maxChars int
	unkID    int
	// maxLen is the longest vocabulary entry in bytes: no longer part of
	// a word can match, so the greedy search starts there (a word of n
	// bytes costs n×maxLen lookups, not n², whatever maxChars allows).
	maxLen int
}

func (w *wordPiece) encode(word string, ids []int) ([]int, error) {
	if utf8.RuneCountInString(word) > w.maxChars {
		return append(ids, w.unkID), nil
	}
	start0 := len(ids)
	var buf strings.Builder
	for start := 0; start < len(word); {
		end := len(word)
		if start+w.maxLen < end {
			end = start + w.maxLen
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		found := -1
		for start < end {
			sub := word[start:end]
			if start > 0 {
				buf.Reset()
				buf.WriteString(w.prefix)
				buf.WriteString(sub)
				sub = buf.String()
			}
			if id, ok := w.vocab[sub]; ok {
				found = id
				break
			}
			_, n := utf8.DecodeLastRuneInString(word[start:end])
			end -= n
		}
		if found < 0 {
			return append(ids[:start0], w.unkID), nil
		}
		ids = append(ids, found)
		start = end
	}
	return ids, nil
}

// bertNormalizer is the reference's BertNormalizer. Its categories are the
// reference's (refchars.go): char::is_whitespace (Unicode White_Space) and
// its "other" table for clean_text, its Mn table for strip_accents, not
// sugarme's ASCII whitespace and Cc/Cf.
type bertNormalizer struct {
	clean, chinese, strip, lower bool
}

func (b bertNormalizer) apply(s string) string {
	var out strings.Builder
	for _, r := range s {
		if b.clean {
			if isRefBertRemoved(r) {
				continue
			}
			if unicode.Is(unicode.White_Space, r) {
				r = ' '
			}
		}
		if b.chinese && isChineseChar(r) {
			out.WriteByte(' ')
			out.WriteRune(r)
			out.WriteByte(' ')
			continue
		}
		out.WriteRune(r)
	}
	s = out.String()
	if b.strip {
		out.Reset()
		for _, r := range (normForm{norm.NFD}).apply(s) {
			if !isRefMn(r) {
				out.WriteRune(r)
			}
		}
		s = out.String()
	}
	if b.lower {
		out.Reset()
		s = refLower(s)
	}
	return s
}

func isChineseChar(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F, r >= 0x2B740 && r <= 0x2B81F, r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// bertWords splits on Unicode white space (dropped) and isolates every
// punctuation character (ASCII punctuation or Unicode P*).
func bertWords(s string, dst []string) []string {
	start := -1
	for i, r := range s {
		switch {
		case isRefSpace(r):
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		case isRefPunct(r):
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
			dst = append(dst, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

func newWordPiece(vocab map[string]int, unk, prefix string, maxChars int) (*wordPiece, error) {
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("model.unk_token %q is not in the vocabulary", unk)
	}
	if maxChars < 1 {
		return nil, fmt.Errorf("model.max_input_chars_per_word %d: want >= 1", maxChars)
	}
	maxLen := 0
	for k := range vocab {
		maxLen = max(maxLen, len(k))
	}
	return &wordPiece{vocab: vocab, prefix: prefix, maxChars: maxChars, unkID: id, maxLen: maxLen}, nil
}
