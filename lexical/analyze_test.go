package lexical

import (
	"slices"
	"strings"
	"testing"
)

func terms(text string) []string {
	var out []string
	analyze(text, func(t []byte, _ bool) { out = append(out, string(t)) })
	return out
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
		{"apostrophe joins", "don't John's rock’n’roll", []string{"dont", "john", "rocknroll"}},
		{"trailing apostrophe splits", "dogs' bowl", []string{"dog", "bowl"}},
		{"digits", "GPT-4 in 2024", []string{"gpt", "4", "in", "2024"}},
		{"unicode letters", "Ünïcödé Straße café", []string{"ünïcödé", "straße", "café"}},
		{"cyrillic lowercased", "Привет МИР", []string{"привет", "мир"}},
		{"greek", "ΑΒΓ", []string{"αβγ"}},
		{"nfkc full-width", "ＡＢＣ１２", []string{"abc12"}},
		{"decomposed accent = composed", "cafe\u0301", []string{"café"}},
		{"chinese bigrams", "我喜欢画画", []string{"我喜", "喜欢", "欢画", "画画"}},
		{"single han unigram", "画", []string{"画"}},
		{"han runs split by punctuation", "画，好。", []string{"画", "好"}},
		{"mixed cjk latin", "用GPU加速模型", []string{"用", "gpu", "加速", "速模", "模型"}},
		{"japanese", "カレーを食べる", []string{"カレ", "レー", "ーを", "を食", "食べ", "べる"}},
		{"korean", "한국어", []string{"한국", "국어"}},
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

func TestStem(t *testing.T) {
	tests := map[string]string{
		"paint": "paint", "paints": "paint", "painted": "paint", "painting": "paint",
		"caresses": "caress", "ponies": "poni", "pony": "poni", "cats": "cat", "caress": "caress",
		"agreed": "agree", "feed": "feed", "plastered": "plaster", "sing": "sing",
		"motoring": "motor", "conflated": "conflate", "troubled": "trouble", "sized": "size",
		"hopping": "hop", "falling": "fall", "hissing": "hiss", "fizzed": "fizz",
		"failing": "fail", "filing": "file", "making": "make", "makes": "make",
		"running": "run", "happy": "happi", "sky": "sky", "is": "is", "as": "as",
	}
	for in, want := range tests {
		if got := string(stem([]byte(in))); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
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
		if got := analyzeQuery(tc.in).terms; !slices.Equal(got, tc.want) {
			t.Errorf("analyzeQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
