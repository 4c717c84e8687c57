package lexical_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/rerankd/rerankd/lexical"
	_ "github.com/rerankd/rerankd/lexical/gse" // the gse modes are under test
)

var update = flag.Bool("update", false, "rewrite "+goldenPath+" from the current analyzer")

const goldenPath = "testdata/cjk_terms.golden.json"

// cjkCases are the Chinese and mixed strings whose terms are pinned, per
// mode, by the golden file. They cover what benchmarks/zh exercises:
// words of one, two and many characters, names, numbers, Latin inside
// Chinese, full-width forms, traditional characters, and the scripts the
// Chinese dictionary does not apply to.
var cjkCases = []struct{ name, text string }{
	{"short sentence", "我喜欢画画"},
	{"long dictionary word", "中华人民共和国成立于1949年"},
	{"clause with punctuation", "我上周去杭州出差，顺便看了西湖"},
	{"mixed latin word", "我的 MacBook 电池坏了"},
	{"full-width latin", "我的ＭａｃＢｏｏｋ　Ｐｒｏ"},
	{"full-width flight code", "婆婆坐ＣＡ１８３１来上海"},
	{"traditional", "我們下週去台北"},
	{"traditional name", "阿傑送了我一盒鳳梨酥"},
	{"simplified name", "阿杰明年三月结婚"},
	{"three-character word", "她喜欢弹钢琴和画画"},
	{"one-character words", "打了猫三联疫苗"},
	{"one character", "猫"},
	{"latin between chinese", "周报用Notion写，PPT用Keynote"},
	{"version number", "星火2.0上线了"},
	{"chinese numerals", "房贷每个月还一万一千五"},
	{"emoji", "今天很开心😊"},
	{"japanese kana", "カレーを食べる"},
	{"japanese kanji only", "東京都"},
	{"korean", "한국어 공부"},
	{"no cjk", "Running shoes, size 27"},
}

type goldenCase struct {
	Name  string              `json:"name"`
	Text  string              `json:"text"`
	Terms map[string][]string `json:"terms"` // mode → terms
}

func analyzers(t testing.TB) map[lexical.CJKMode]*lexical.Analyzer {
	t.Helper()
	out := map[lexical.CJKMode]*lexical.Analyzer{}
	for _, m := range lexical.CJKModes() {
		a, err := lexical.NewAnalyzer(m)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = a
	}
	return out
}

// TestCJKGolden compares every mode's terms for cjkCases with the golden
// file; go test ./lexical -run TestCJKGolden -update rewrites it (review
// the diff: a change there changes every index built with that mode).
func TestCJKGolden(t *testing.T) {
	as := analyzers(t)
	got := make([]goldenCase, len(cjkCases))
	for i, c := range cjkCases {
		got[i] = goldenCase{Name: c.name, Text: c.text, Terms: map[string][]string{}}
		for m, a := range as {
			terms := a.Terms(c.text)
			if terms == nil {
				terms = []string{}
			}
			got[i].Terms[string(m)] = terms
		}
	}
	if *update {
		// One case per line keeps a regenerated file's diff readable.
		var buf bytes.Buffer
		buf.WriteString("[\n")
		for i, c := range got {
			line, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(line)
			if i < len(got)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString("]\n")
		if err := os.WriteFile(goldenPath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want []goldenCase
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("golden has %d cases, the table %d (run with -update)", len(want), len(got))
	}
	for i := range got {
		if got[i].Text != want[i].Text {
			t.Errorf("case %d: golden text %q, table %q (run with -update)", i, want[i].Text, got[i].Text)
			continue
		}
		for _, m := range lexical.CJKModes() {
			g, w := got[i].Terms[string(m)], want[i].Terms[string(m)]
			if !slices.Equal(g, w) {
				t.Errorf("%s / %s: Terms(%q)\n got %q\nwant %q", got[i].Name, m, got[i].Text, g, w)
			}
		}
	}
}

// TestGseSegments spot-checks that the gse modes really use the
// dictionary (the golden file alone would also pin a broken segmenter).
func TestGseSegments(t *testing.T) {
	as := analyzers(t)
	tests := []struct {
		mode lexical.CJKMode
		text string
		has  []string // terms that must be present
		not  []string // terms that must be absent
	}{
		// Search mode: the word and the dictionary words inside it.
		{lexical.CJKGse, "中华人民共和国", []string{"中华人民共和国", "中华", "人民", "共和国"}, []string{"华人民"}},
		// A cross-word bigram is not a word.
		{lexical.CJKGse, "她喜欢弹钢琴", []string{"喜欢", "钢琴", "弹钢琴"}, []string{"欢弹"}},
		{lexical.CJKGseBigram, "她喜欢弹钢琴", []string{"欢弹", "弹钢琴", "她"}, nil},
		{lexical.CJKGseUnigram, "她喜欢弹钢琴", []string{"她", "弹", "喜欢", "弹钢琴"}, []string{"欢弹"}},
		// The traditional word list is loaded too.
		{lexical.CJKGse, "我們下週去台北", []string{"我們", "台北"}, nil},
		// Kana runs get bigrams, not the Chinese dictionary.
		{lexical.CJKGse, "カレーを食べる", []string{"カレ", "食べ"}, nil},
	}
	for _, tc := range tests {
		terms := as[tc.mode].Terms(tc.text)
		for _, h := range tc.has {
			if !slices.Contains(terms, h) {
				t.Errorf("%s: Terms(%q) = %q, missing %q", tc.mode, tc.text, terms, h)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(terms, n) {
				t.Errorf("%s: Terms(%q) = %q, has %q", tc.mode, tc.text, terms, n)
			}
		}
	}
	// No term is counted twice in the hybrids: a word the n-grams already
	// gave is not emitted again.
	for _, m := range []lexical.CJKMode{lexical.CJKGseBigram, lexical.CJKGseUnigram} {
		terms := as[m].Terms("画画")
		if n := count(terms, "画画"); n != 1 {
			t.Errorf("%s: Terms(画画) = %q: 画画 %d times, want once", m, terms, n)
		}
	}
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// chineseMemories is a small agent memory for the end-to-end checks.
var chineseMemories = []string{
	"老公叫陈浩，在一家芯片公司做软件工程师。",
	"我对芒果过敏，吃了嘴巴周围会起红疹。",
	"朵朵的钢琴课改到每周六上午十点了，老师姓郑。",
	"ＭａｃＢｏｏｋ最近掉电很快，充满一次只能用三个小时。",
	"阿傑明年三月結婚，邀請我去台北參加婚禮。",
	"橘子打了猫三联疫苗，下次加强针是明年三月。",
	"订好了十月一号上海飞大阪关西机场的机票，MU515，早上八点半起飞。",
	"周末带朵朵去上海动物园，终于看到了大熊猫。",
}

// TestChineseQueries runs Chinese, mixed, full-width and traditional
// queries end to end through a Scorer in every mode.
func TestChineseQueries(t *testing.T) {
	tests := []struct {
		query string
		want  int // index in chineseMemories that must rank first
	}{
		{"我对什么过敏", 1},
		{"钢琴老师姓什么", 2},
		{"我的 MacBook 掉电", 3}, // mixed; the memory is full-width
		{"阿傑什麼時候結婚", 4},      // traditional query, traditional memory
		{"ＭＵ５１５几点起飞", 6},     // full-width query, ASCII memory
		{"陈浩在哪家公司上班", 0},
		{"橘子的疫苗", 5},
	}
	for _, m := range lexical.CJKModes() {
		cfg := lexical.DefaultConfig()
		cfg.CJK = m
		s, err := lexical.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			rs := s.Score(tc.query, chineseMemories)
			best := 0
			for i, r := range rs {
				if r.Raw > rs[best].Raw {
					best = i
				}
			}
			if best != tc.want {
				t.Errorf("%s: %q ranked %q first, want %q", m, tc.query, chineseMemories[best], chineseMemories[tc.want])
			}
		}
	}
}

// TestOneCharacterWord shows why the default emits unigrams: with bigrams
// alone, a one-character word never matches inside a longer run.
func TestOneCharacterWord(t *testing.T) {
	doc := []string{"橘子打了猫三联疫苗", "周末去爬山"}
	for m, wantMatch := range map[lexical.CJKMode]bool{
		lexical.CJKBigram: false, lexical.CJKUnigramBigram: true,
		lexical.CJKGse: true, lexical.CJKGseBigram: true, lexical.CJKGseUnigram: true,
	} {
		cfg := lexical.DefaultConfig()
		cfg.CJK = m
		s, err := lexical.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Score("猫", doc)[0].Raw > 0; got != wantMatch {
			t.Errorf("%s: 猫 matches %q: %v, want %v", m, doc[0], got, wantMatch)
		}
	}
}

// maxTermBytes mirrors the package's cap on one term.
const maxTermBytes = 64

// FuzzAnalyzeGse checks the gse modes on arbitrary text: no panic, every
// term non-empty valid UTF-8 within the length cap, the same terms on a
// second call, query terms drawn from the text's terms, and text without
// CJK characters analyzed exactly as in the default mode (the mode only
// touches CJK runs). FuzzScore covers the dictionary-free default.
func FuzzAnalyzeGse(f *testing.F) {
	for _, c := range cjkCases {
		f.Add(c.text)
	}
	f.Add("中华人民共和国中华人民共和国中华人民共和国中华人民共和国中华人民共和国")
	f.Add("a\xffb中\xc3文")
	as := analyzers(f)
	def := as[lexical.DefaultCJK]
	f.Fuzz(func(t *testing.T, text string) {
		hasCJK := strings.ContainsFunc(norm.NFKC.String(text), isCJK)
		for _, m := range []lexical.CJKMode{lexical.CJKGse, lexical.CJKGseBigram, lexical.CJKGseUnigram} {
			a := as[m]
			terms := a.Terms(text)
			for _, term := range terms {
				if term == "" || !utf8.ValidString(term) || len(term) > maxTermBytes {
					t.Fatalf("%s: Terms(%q) has bad term %q", m, text, term)
				}
			}
			if again := a.Terms(text); !slices.Equal(again, terms) {
				t.Fatalf("%s: Terms(%q) not deterministic: %q then %q", m, text, terms, again)
			}
			for _, q := range a.QueryTerms(text) {
				if !slices.Contains(terms, q) {
					t.Fatalf("%s: query term %q of %q is not among its terms %q", m, q, text, terms)
				}
			}
			if !hasCJK {
				if d := def.Terms(text); !slices.Equal(terms, d) {
					t.Fatalf("%s: Terms(%q) = %q, default mode %q, for text without CJK", m, text, terms, d)
				}
			}
		}
	})
}

// isCJK mirrors the package's test for characters of CJK runs (after
// NFKC, which can turn compatibility characters into kana or Han).
func isCJK(r rune) bool {
	switch r {
	case 0x30FC, 0xFF70, 0x3005: // ー, ｰ, 々
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// BenchmarkTerms is the analysis cost per mode on a Chinese memory.
func BenchmarkTerms(b *testing.B) {
	as := analyzers(b)
	text := "订好了十月一号上海飞大阪关西机场的机票，MU515，早上八点半起飞。在京都想住传统的日式旅馆，最好房间里能泡温泉。"
	for _, m := range lexical.CJKModes() {
		b.Run(string(m), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_ = as[m].Terms(text)
			}
		})
	}
}
