package locomo

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	tests := []struct {
		in   string
		want time.Time // zero: error
	}{
		// The LoCoMo forms.
		{"1:56 pm on 8 May, 2023", at(2023, time.May, 8, 13, 56)},
		{"10:37 am on 27 June, 2023", at(2023, time.June, 27, 10, 37)},
		{"12:09 am on 13 September, 2023", at(2023, time.September, 13, 0, 9)},
		{"12:28 pm on 8 November, 2023", at(2023, time.November, 8, 12, 28)},
		{"8 May, 2023", at(2023, time.May, 8, 0, 0)}, // events_session_N date
		// Odd but unambiguous.
		{"  1:56 PM on 8 May, 2023 ", at(2023, time.May, 8, 13, 56)},
		{"1:56pm on 8 May 2023", at(2023, time.May, 8, 13, 56)},
		{"1:56 p.m. on 8 May, 2023", at(2023, time.May, 8, 13, 56)},
		{"at 4:21 on July 16, 2023", at(2023, time.July, 16, 4, 21)},
		{"16:21 on 16 Jul 2023", at(2023, time.July, 16, 16, 21)},
		{"On June 5th, 2022, at 2:12 pm", at(2022, time.June, 5, 14, 12)},
		{"9:05 am on 2nd March 2022", at(2022, time.March, 2, 9, 5)},
		{"the 1st of Sept. 2021", at(2021, time.September, 1, 0, 0)},
		{"2023-05-08", at(2023, time.May, 8, 0, 0)},
		{"2023-05-08 13:56", at(2023, time.May, 8, 13, 56)},
		{"2023-05-08T13:56:00+02:00", at(2023, time.May, 8, 11, 56)},
		{"29 February 2024", at(2024, time.February, 29, 0, 0)},
		// Errors.
		{"", time.Time{}},
		{"sometime in spring", time.Time{}},
		{"1:56 pm on 8 May", time.Time{}},
		{"1:56 pm on May, 2023", time.Time{}},
		{"8 2023", time.Time{}},
		{"29 February 2023", time.Time{}},
		{"31 April 2023", time.Time{}},
		{"0 May 2023", time.Time{}},
		{"13:56 pm on 8 May, 2023", time.Time{}},
		{"0:56 am on 8 May, 2023", time.Time{}},
		{"1:60 pm on 8 May, 2023", time.Time{}},
		{"1:5 pm on 8 May, 2023", time.Time{}},
		{"24:00 on 8 May, 2023", time.Time{}},
		{"pm 1:56 on 8 May, 2023", time.Time{}},
		{"1:56 pm pm on 8 May, 2023", time.Time{}},
		{"1:56 2:00 on 8 May, 2023", time.Time{}},
		{"8 May June 2023", time.Time{}},
		{"8 9 May 2023", time.Time{}},
		{"8 May 2023 2024", time.Time{}},
		{"8 May 20233", time.Time{}},
		{"8th May 2023th", time.Time{}},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in)
		if tc.want.IsZero() {
			if err == nil {
				t.Errorf("ParseTime(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
