package locomo

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var months = map[string]time.Month{
	"january": time.January, "jan": time.January,
	"february": time.February, "feb": time.February,
	"march": time.March, "mar": time.March,
	"april": time.April, "apr": time.April,
	"may":  time.May,
	"june": time.June, "jun": time.June,
	"july": time.July, "jul": time.July,
	"august": time.August, "aug": time.August,
	"september": time.September, "sep": time.September, "sept": time.September,
	"october": time.October, "oct": time.October,
	"november": time.November, "nov": time.November,
	"december": time.December, "dec": time.December,
}

// isoLayouts are tried before the free-form parser, on the trimmed input.
var isoLayouts = []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// ParseTime parses a LoCoMo session date-time such as "1:56 pm on 8 May,
// 2023", in UTC (the data has no zone). It is lenient about form, strict
// about content: the words "on"/"at"/"of", commas and periods, case, day
// ordinals ("5th"), "a.m."/"p.m.", a missing time (midnight), 24-hour
// times, abbreviated months, either day-month order and ISO 8601 dates
// are accepted; a missing day, month or year, an unknown word, a repeated
// part or an impossible date (31 February, 13 pm) is an error.
func ParseTime(s string) (time.Time, error) {
	t, err := parseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t, nil
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("empty")
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	s = strings.NewReplacer("a.m.", "am", "p.m.", "pm", ",", " ", ".", " ").Replace(strings.ToLower(s))
	var (
		year, day, hour, minute = -1, -1, -1, 0
		month                   time.Month
		meridiem                string
	)
	for _, tok := range strings.Fields(s) {
		switch {
		case tok == "on" || tok == "at" || tok == "of" || tok == "the":
		case tok == "am" || tok == "pm":
			if meridiem != "" || hour < 0 {
				return time.Time{}, fmt.Errorf("misplaced %q", tok)
			}
			meridiem = tok
		case strings.Contains(tok, ":"):
			if hour >= 0 {
				return time.Time{}, errors.New("two times")
			}
			if m := strings.TrimSuffix(strings.TrimSuffix(tok, "am"), "pm"); m != tok {
				meridiem = tok[len(m):]
				tok = m
			}
			h, mm, _ := strings.Cut(tok, ":")
			var ok1, ok2 bool
			hour, ok1 = parseIndex(h)
			minute, ok2 = parseIndex(mm)
			if !ok1 || !ok2 || len(mm) != 2 || minute > 59 || hour > 23 {
				return time.Time{}, fmt.Errorf("bad time %q", tok)
			}
		case months[tok] != 0:
			if month != 0 {
				return time.Time{}, errors.New("two months")
			}
			month = months[tok]
		default:
			num := tok
			for _, suf := range []string{"st", "nd", "rd", "th"} {
				num = strings.TrimSuffix(num, suf)
			}
			n, ok := parseIndex(num)
			switch {
			case !ok:
				return time.Time{}, fmt.Errorf("unknown word %q", tok)
			case len(num) == 4 && num == tok && year < 0:
				year = n
			case len(num) <= 2 && day < 0:
				day = n
			default:
				return time.Time{}, fmt.Errorf("unexpected number %q", tok)
			}
		}
	}
	if year < 0 || month == 0 || day < 0 {
		return time.Time{}, errors.New("need a day, a month and a year")
	}
	if hour < 0 {
		hour = 0
	}
	switch meridiem {
	case "am", "pm":
		if hour < 1 || hour > 12 {
			return time.Time{}, fmt.Errorf("hour %d with %s", hour, meridiem)
		}
		hour %= 12
		if meridiem == "pm" {
			hour += 12
		}
	}
	t := time.Date(year, month, day, hour, minute, 0, 0, time.UTC)
	if t.Day() != day || t.Month() != month {
		return time.Time{}, fmt.Errorf("no day %d in %s %d", day, month, year)
	}
	return t, nil
}
