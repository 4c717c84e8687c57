package lexical

import (
	"fmt"
	"slices"
	"strings"
)

// CJKMode selects how a run of CJK characters (Han, Hiragana, Katakana,
// Hangul: scripts written without spaces) becomes index terms. Everything
// else in the analysis is the same in every mode, so text without CJK
// characters gets the same terms whatever the mode.
type CJKMode string

const (
	// CJKBigram emits overlapping character bigrams ("我喜欢画画" → 我喜 喜欢
	// 欢画 画画), and a one-character run as that unigram: Lucene's
	// CJKAnalyzer. No data files.
	CJKBigram CJKMode = "bigram"

	// CJKUnigramBigram emits every character as a unigram as well as the
	// bigrams, in text order (我 我喜 喜 喜欢 欢 ...), like Lucene's
	// CJKBigramFilter with outputUnigrams. Words of one character (猫, 茶)
	// then match inside longer runs, and a paraphrase that shares single
	// characters with the answer still scores. No data files. The default:
	// it retrieved best of all modes on benchmarks/zh (see doc.go).
	CJKUnigramBigram CJKMode = "unigram+bigram"

	// CJKGse segments runs of Han characters into dictionary words with
	// github.com/go-ego/gse (jieba's algorithm: a dictionary DAG with HMM
	// for unknown words) in search mode, which adds the dictionary words
	// inside a long word ("中华人民共和国" also gives 中华 人民 共和国).
	// Runs with kana or Hangul get bigrams (CJKBigram): the dictionary is
	// Chinese. Needs package lexical/gse linked in; selecting it loads the
	// dictionary once per process: about 4 s of CPU and 200 MB of heap
	// (see segmenter.go).
	CJKGse CJKMode = "gse"

	// CJKGseBigram emits the bigrams of CJKBigram plus the gse search-mode
	// words that are not themselves bigrams (one character, or three or
	// more): bigram recall with whole-word and single-character matches on
	// top. Kana and Hangul runs get bigrams. Same dictionary cost as
	// CJKGse.
	CJKGseBigram CJKMode = "gse+bigram"

	// CJKGseUnigram emits every character as a unigram plus the gse words
	// of two or more characters in precise mode (one segmentation, no
	// sub-words): single-character matches everywhere, whole-word matches
	// where the dictionary knows the word. Kana and Hangul runs get
	// CJKUnigramBigram's terms. Same dictionary cost as CJKGse.
	CJKGseUnigram CJKMode = "gse+unigram"
)

// DefaultCJK is the mode used when Config.CJK is empty, and by the
// package-level Terms and QueryTerms.
const DefaultCJK = CJKUnigramBigram

// CJKModes returns every valid mode, the default first.
func CJKModes() []CJKMode {
	return []CJKMode{CJKUnigramBigram, CJKBigram, CJKGse, CJKGseBigram, CJKGseUnigram}
}

// ParseCJKMode returns the mode named s ("" is DefaultCJK), or an error
// listing the valid names.
func ParseCJKMode(s string) (CJKMode, error) {
	if s == "" {
		return DefaultCJK, nil
	}
	m := CJKMode(s)
	if !slices.Contains(CJKModes(), m) {
		names := make([]string, 0, len(CJKModes()))
		for _, v := range CJKModes() {
			names = append(names, string(v))
		}
		return "", fmt.Errorf("lexical: unknown CJK mode %q (want %s)", s, strings.Join(names, ", "))
	}
	return m, nil
}

// usesGse reports whether the mode needs the gse dictionary.
func (m CJKMode) usesGse() bool {
	return m == CJKGse || m == CJKGseBigram || m == CJKGseUnigram
}

// unigrams reports whether the mode emits single characters for runs the
// dictionary does not segment.
func (m CJKMode) unigrams() bool { return m == CJKUnigramBigram || m == CJKGseUnigram }
