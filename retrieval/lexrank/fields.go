package lexrank

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/index"
)

// Fields is field-aware matching: BM25F (bm25.Index.SearchFields;
// Robertson, Zaragoza and Taylor, CIKM 2004) over three fields of each
// memory instead of one bag of words:
//
//   - text: what was said, weight 1, length normalisation Ranking.B;
//   - speaker: who said it, the value of the memory's metadata key
//     Config.SpeakerKey ("speaker" by default), analysed as text is; a
//     memory without that key has an empty speaker field;
//   - time: when, terms of the memory's Time in the offset it was written
//     with (the stores keep it): its year, month and day of the month.
//
// A query term's frequency is combined over the fields before BM25's
// saturation, each field's counted Speaker or Time times a text
// occurrence after its own length normalisation (SpeakerB, TimeB), and
// its idf counts the memories that have it in any field. So a question
// naming Caroline favours what Caroline said over what was said to her,
// and a speaker's turn matches her name even when its text does not.
//
// The time field matches only the dates a query names explicitly, which
// the query's own analysis reads (queryTimeTerms): English month names
// (May and March only when capitalised and not opening a sentence, or
// next to a number; abbreviations only next to a number), a day next to
// its month ("October 13", "13th of October"), four-digit years
// 1900-2099, ISO dates (2023-10-13), and the Chinese forms 2023年, 3月 /
// 三月 and 3月15日 / 3月15号. Relative dates ("yesterday", "last week",
// 去年) are not resolved: neither the query nor the memory says what they
// count from, and a memory's "yesterday" is relative to its own time.
// Weekdays are not indexed: in a question they are relative ("last
// Friday"), and alone they name a seventh of all memories. Numeric dates
// such as 5/8/2023 are ambiguous (May 8 or 5 August) and not read.
//
// The zero value is off. The scan level (while an index is built) does
// not use fields.
type Fields struct {
	Speaker  float64 // weight of the speaker field, [0, 10]; 0: not searched
	Time     float64 // weight of the time field, [0, 10]; 0: not searched, no date read from the query
	SpeakerB float64 // length normalisation within the speaker field, [0, 1]
	TimeB    float64 // length normalisation within the time field, [0, 1]
}

// On reports whether any field is searched.
func (f Fields) On() bool { return f.Speaker != 0 || f.Time != 0 }

// params are f as bm25's field parameters.
func (f Fields) params() bm25.FieldParams {
	var p bm25.FieldParams
	p.Weight[index.FieldSpeaker], p.B[index.FieldSpeaker] = f.Speaker, f.SpeakerB
	p.Weight[index.FieldTime], p.B[index.FieldTime] = f.Time, f.TimeB
	return p
}

func validDay(m, d int) bool   { return m >= 1 && m <= 12 && d >= 1 && d <= 31 }
func plausibleYear(y int) bool { return y >= 1900 && y <= 2099 }

// English month names and abbreviations, by number.
var (
	monthNames = wordNumbers("january february march april may june july august september october november december")
	monthAbbrs = func() map[string]int {
		m := wordNumbers("jan feb mar apr - jun jul aug sep oct nov dec")
		m["sept"] = 9
		return m
	}()
)

func wordNumbers(words string) map[string]int {
	m := map[string]int{}
	for i, w := range strings.Fields(words) {
		m[w] = i + 1
	}
	return m
}

// qword is one word or number of a query, for the date reader.
type qword struct {
	text, lower string
	start       bool   // first of its sentence
	sep         string // the punctuation between it and the previous word
	num         int    // its value when it is a number (13, or 13th), else -1
	digits      int    // the number's digits
	ordinal     bool   // 13th
}

// queryTimeTerms returns the time terms of the dates text names
// explicitly (see Fields), each once, in order of appearance.
func queryTimeTerms(text string) []string {
	if !isASCIIString(text) {
		text = norm.NFKC.String(text) // full-width digits and letters
	}
	var out []string
	emit := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	words := splitQuery(text)
	isNum := func(i int) bool { return i >= 0 && i < len(words) && words[i].num >= 0 }
	isDay := func(i int) bool { return isNum(i) && words[i].num >= 1 && words[i].num <= 31 && words[i].digits <= 2 }
	for i, w := range words {
		if w.num >= 0 && w.digits == 4 && !w.ordinal && plausibleYear(w.num) {
			emit(index.YearTerm(w.num))
			// ISO date: 2023-10-13 or 2023/10/13.
			if i+2 < len(words) && (words[i+1].sep == "-" || words[i+1].sep == "/") && words[i+2].sep == words[i+1].sep &&
				isDay(i+1) && isDay(i+2) && validDay(words[i+1].num, words[i+2].num) {
				emit(index.MonthTerm(words[i+1].num))
				emit(index.DayTerm(words[i+1].num, words[i+2].num))
			}
			continue
		}
		// A number next to the word, in the same sentence.
		nearNumber := isNum(i-1) && !w.start || isNum(i+1) && !words[i+1].start
		capital := unicode.IsUpper(firstRune(w.text))
		m, ok := monthNames[w.lower]
		switch {
		case ok && (w.lower == "may" || w.lower == "march"):
			ok = capital && (!w.start || nearNumber) // not "may I" or "march on"
		case !ok:
			m, ok = monthAbbrs[w.lower]
			ok = ok && capital && nearNumber // not "mar", "sep", "dec" as words
		}
		if !ok {
			continue
		}
		emit(index.MonthTerm(m))
		switch {
		case isDay(i+1) && !words[i+1].start: // October 13, October 13th
			emit(index.DayTerm(m, words[i+1].num))
		case isDay(i-1) && !w.start: // 13 October
			emit(index.DayTerm(m, words[i-1].num))
		case i >= 2 && words[i-1].lower == "of" && !words[i-1].start && isDay(i-2): // 13th of October
			emit(index.DayTerm(m, words[i-2].num))
		}
	}
	for _, t := range chineseTimeTerms(text) {
		emit(t)
	}
	return out
}

// splitQuery splits text into words and numbers (runs of letters or
// digits, a letter run after digits making an ordinal suffix: 13th),
// marking sentence starts and keeping the separators.
func splitQuery(text string) []qword {
	var out []qword
	start, sep := true, ""
	for len(text) > 0 {
		r, n := utf8.DecodeRuneInString(text)
		if !isWordRune(r) {
			// A full stop ends a sentence when a space or the end follows
			// (not in 10.5 or e.g).
			if strings.ContainsRune("?!\n", r) || r == '.' && (len(text) == n || text[n] == ' ' || text[n] == '\n') {
				start = true
			}
			sep += text[:n]
			text = text[n:]
			continue
		}
		end := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if end < 0 {
			end = len(text)
		}
		w := qword{text: text[:end], lower: strings.ToLower(text[:end]), start: start, sep: strings.TrimSpace(sep), num: -1}
		digits := strings.IndexFunc(w.text, func(r rune) bool { return r < '0' || r > '9' })
		if digits < 0 {
			digits = len(w.text)
		}
		suffix := w.lower[digits:]
		if digits > 0 && digits <= 4 && (suffix == "" || suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th") {
			w.num, _ = strconv.Atoi(w.text[:digits])
			w.digits, w.ordinal = digits, suffix != ""
		}
		out = append(out, w)
		start, sep = false, ""
		text = text[end:]
	}
	return out
}

// isWordRune reports whether r continues an ASCII word or number; other
// scripts (CJK) and punctuation separate, so "3月" is the number 3.
func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }

func isASCIIString(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Chinese dates: 2023年, 3月 / 三月 / 十二月, 3月15日 / 3月15号. A month
// must not follow 个 (三个月 is a duration) and must be in 1..12.
var (
	zhYear  = regexp.MustCompile(`(\d{4})\s*年`)
	zhMonth = regexp.MustCompile(`(^|[^个\d一二三四五六七八九十两])(\d{1,2}|[一二三四五六七八九十]{1,3})\s*月(?:份)?(?:\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日号])?`)
)

func chineseTimeTerms(text string) []string {
	if !strings.ContainsAny(text, "年月") {
		return nil
	}
	var out []string
	for _, m := range zhYear.FindAllStringSubmatch(text, -1) {
		if y, _ := strconv.Atoi(m[1]); plausibleYear(y) {
			out = append(out, index.YearTerm(y))
		}
	}
	for _, m := range zhMonth.FindAllStringSubmatch(text, -1) {
		mo := zhNumber(m[2])
		if mo < 1 || mo > 12 {
			continue
		}
		out = append(out, index.MonthTerm(mo))
		if d := zhNumber(m[3]); m[3] != "" && validDay(mo, d) {
			out = append(out, index.DayTerm(mo, d))
		}
	}
	return out
}

// zhNumber reads 1..99 in Arabic digits or Chinese numerals (三, 十二,
// 二十一, 三十); -1 otherwise.
func zhNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	rs := []rune(s)
	d := func(i int) int { // a digit 1..9, or a value that spoils any sum
		if n, ok := zhDigits[rs[i]]; ok {
			return n
		}
		return -1000
	}
	n := -1
	switch {
	case len(rs) == 1 && rs[0] == '十':
		n = 10
	case len(rs) == 1:
		n = d(0)
	case len(rs) == 2 && rs[0] == '十':
		n = 10 + d(1)
	case len(rs) == 2 && rs[1] == '十':
		n = 10 * d(0)
	case len(rs) == 3 && rs[1] == '十':
		n = 10*d(0) + d(2)
	}
	return max(n, -1)
}

var zhDigits = map[rune]int{'一': 1, '二': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
