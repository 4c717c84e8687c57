package lexical

import (
	"slices"
	"strings"
	"testing"
)

func terms(text string) []string { return defaultAnalyzer.Terms(text) }

// analyzer returns an Analyzer for a mode that needs no dictionary.
func analyzer(t testing.TB, mode CJKMode) *Analyzer {
	t.Helper()
	a, err := NewAnalyzer(mode)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"whitespace", " \t\n ", nil},
		{"punctuation only", "?!... --- ;;", nil},
		{"lowercase and stem", "The Painted PAINTINGS", []string{"the", "paint", "paint"}},
		{"stopwords kept unstemmed", "was this", []string{"was", "this"}},
		{"apostrophe joins", "don't John's rock’n’roll", []string{"dont", "john", "rocknrol"}},
		{"trailing apostrophe splits", "dogs' bowl", []string{"dog", "bowl"}},
		{"digits", "GPT-4 in 2024", []string{"gpt", "4", "in", "2024"}},
		{"unicode letters", "Ünïcödé Straße café", []string{"ünïcödé", "straße", "café"}},
		{"cyrillic lowercased", "Привет МИР", []string{"привет", "мир"}},
		{"greek", "ΑΒΓ", []string{"αβγ"}},
		{"nfkc full-width", "ＡＢＣ１２", []string{"abc12"}},
		{"decomposed accent = composed", "cafe\u0301", []string{"café"}},
		{"invalid utf8 separates", "ab\xffcd\xc3", []string{"ab", "cd"}},
		{"long word truncated", "x" + strings.Repeat("7", 200) + " b", []string{"x" + strings.Repeat("7", maxTermBytes-1), "b"}},
		{"long word truncated at rune boundary", strings.Repeat("é", 100), []string{strings.Repeat("é", maxTermBytes/2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := terms(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("analyze(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestAnalyzeCJK pins the dictionary-free CJK modes by hand; the gse
// modes are pinned by the golden file (cjk_test.go).
func TestAnalyzeCJK(t *testing.T) {
	tests := []struct {
		mode     CJKMode
		name, in string
		want     []string
	}{
		{CJKBigram, "bigrams", "我喜欢画画", []string{"我喜", "喜欢", "欢画", "画画"}},
		{CJKBigram, "single han unigram", "画", []string{"画"}},
		{CJKBigram, "runs split by punctuation", "画，好。", []string{"画", "好"}},
		{CJKBigram, "mixed cjk latin", "用GPU加速模型", []string{"用", "gpu", "加速", "速模", "模型"}},
		{CJKBigram, "japanese", "カレーを食べる", []string{"カレ", "レー", "ーを", "を食", "食べ", "べる"}},
		{CJKBigram, "korean", "한국어", []string{"한국", "국어"}},
		{CJKUnigramBigram, "unigrams and bigrams in text order", "我喜欢画",
			[]string{"我", "我喜", "喜", "喜欢", "欢", "欢画", "画"}},
		{CJKUnigramBigram, "one-character run once", "猫。", []string{"猫"}},
		{CJKUnigramBigram, "mixed chinese english", "我的MacBook坏了",
			[]string{"我", "我的", "的", "macbook", "坏", "坏了", "了"}},
		{CJKUnigramBigram, "full-width latin and digits", "ＭａｃＢｏｏｋ用了３年",
			[]string{"macbook", "用", "用了", "了", "3", "年"}},
		{CJKUnigramBigram, "traditional stays traditional", "鋼琴課",
			[]string{"鋼", "鋼琴", "琴", "琴課", "課"}},
		{CJKUnigramBigram, "iteration mark inside the run", "人々", []string{"人", "人々", "々"}},
		{CJKUnigramBigram, "korean", "한국", []string{"한", "한국", "국"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode)+"/"+tc.name, func(t *testing.T) {
			if got := analyzer(t, tc.mode).Terms(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestStem pins the Snowball English (Porter2) stems of the library, as
// this package applies them (lowercase a-z words, stopwords excluded).
func TestStem(t *testing.T) {
	tests := map[string]string{
		"paint": "paint", "paints": "paint", "painted": "paint", "painting": "paint",
		"caresses": "caress", "ponies": "poni", "cats": "cat", "caress": "caress",
		"feed": "feed", "plastered": "plaster", "sing": "sing",
		"motoring": "motor", "conflated": "conflat", "troubled": "troubl", "sized": "size",
		"hopping": "hop", "falling": "fall", "hissing": "hiss", "fizzed": "fizz",
		"failing": "fail", "filing": "file", "making": "make", "makes": "make",
		"running": "run", "happy": "happi", "sky": "sky", "skies": "sky",
		"generously": "generous", "generalization": "general", "news": "news",
		"dying": "die", "is": "is", "as": "as",
	}
	s := defaultAnalyzer.scratch()
	for in, want := range tests {
		if got := string(s.stem([]byte(in))); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
	// A word of maxTermBytes, the longest the analyzer passes, stems in
	// place without panicking.
	long := strings.Repeat("ab", maxTermBytes/2-3) + "ations"
	if got := string(s.stem([]byte(long))); !strings.HasPrefix(long, got) {
		t.Errorf("stem(%q) = %q", long, got)
	}
}

func TestAnalyzeQuery(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"the cat and the cats", []string{"cat"}},
		{"The Who", []string{"the", "who"}}, // all stopwords: kept
		{"to be or not to be", []string{"not"}},
		{"is it", []string{"is", "it"}},
	}
	for _, tc := range tests {
		if got := defaultAnalyzer.analyzeQuery(tc.in).terms; !slices.Equal(got, tc.want) {
			t.Errorf("analyzeQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
