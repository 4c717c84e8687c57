package locomo

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParseUnit(t *testing.T) {
	for _, u := range []Unit{UnitTurn, UnitSession, UnitObservation, UnitSummary} {
		got, err := ParseUnit(u.String())
		if err != nil || got != u {
			t.Errorf("ParseUnit(%q) = %v, %v", u.String(), got, err)
		}
	}
	if _, err := ParseUnit("paragraph"); err == nil {
		t.Error("ParseUnit(paragraph): no error")
	}
	if s := Unit(9).String(); s != "unit(9)" {
		t.Errorf("Unit(9).String() = %q", s)
	}
	if s := Category(7).String(); s != "category(7)" {
		t.Errorf("Category(7).String() = %q", s)
	}
}

func TestMemories(t *testing.T) {
	d := mustLoad(t, filepath.Join("testdata", "flat"))
	may8 := time.Date(2023, time.May, 8, 13, 56, 0, 0, time.UTC)
	jun19 := time.Date(2023, time.June, 19, 10, 4, 0, 0, time.UTC)
	a1 := &d.Conversations[0]
	tests := []struct {
		unit  Unit
		n     int // memories in the dataset
		first Memory
		last  Memory // of a1
	}{
		{UnitTurn, 8,
			Memory{"a1/D1:1", "a1", 1, "Ada: I adopted a cat named Pixel.", may8, "Ada"},
			Memory{"a1/D2:2", "a1", 2, "Ada: Pixel learned to open doors. [shares an image: a cat near a door]", jun19, "Ada"}},
		{UnitSession, 4,
			Memory{"a1/S1", "a1", 1, "Ada: I adopted a cat named Pixel.\nBo: Look at my new bike! [shares an image: a photo of a red bicycle]\nAda: Nice! Where do you ride?", may8, ""},
			Memory{"a1/S2", "a1", 2, "Bo: I rode to the lake on Sunday.\nAda: Pixel learned to open doors. [shares an image: a cat near a door]", jun19, ""}},
		{UnitObservation, 5,
			Memory{"a1/O1:1", "a1", 1, "Ada adopted a cat named Pixel.", may8, "Ada"},
			Memory{"a1/O2:2", "a1", 2, "Bo rode to the lake.", jun19, "Bo"}},
		{UnitSummary, 2,
			Memory{"a1/Sum1", "a1", 1, "Ada and Bo talked about a cat and a bike.", may8, ""},
			Memory{"a1/Sum2", "a1", 2, "Bo rode to the lake; Pixel opens doors.", jun19, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.unit.String(), func(t *testing.T) {
			all := d.Memories(tc.unit)
			mine := a1.Memories(tc.unit)
			if len(all) != tc.n || len(mine) == 0 {
				t.Fatalf("%d memories (%d in a1), want %d", len(all), len(mine), tc.n)
			}
			if mine[0] != tc.first || mine[len(mine)-1] != tc.last {
				t.Errorf("first %+v\n last %+v\nwant %+v\n     %+v", mine[0], mine[len(mine)-1], tc.first, tc.last)
			}
			checkQrels(t, tc.unit, all, d.Qrels(tc.unit))
		})
	}
	if m := d.Memories(Unit(9)); len(m) != 0 {
		t.Errorf("unknown unit: %d memories", len(m))
	}
}

func TestQrels(t *testing.T) {
	d := mustLoad(t, filepath.Join("testdata", "flat"))
	one := func(ids ...string) map[string]int {
		m := make(map[string]int, len(ids))
		for _, id := range ids {
			m[id] = 1
		}
		return m
	}
	tests := []struct {
		unit Unit
		want map[string]map[string]int
	}{
		{UnitTurn, map[string]map[string]int{
			"a1/Q0": one("a1/D1:1"),
			"a1/Q1": one("a1/D1:2", "a1/D2:1"),
			"a1/Q2": one("a1/D2:1"),
			"a1/Q3": one("a1/D1:1"),
			"a1/Q5": one("a1/D1:2"),
			"b2/Q0": one("b2/D1:1"),
			"b2/Q1": one("b2/D2:1"),
		}},
		{UnitSession, map[string]map[string]int{
			"a1/Q0": one("a1/S1"),
			"a1/Q1": one("a1/S1", "a1/S2"),
			"a1/Q2": one("a1/S2"),
			"a1/Q3": one("a1/S1"),
			"a1/Q5": one("a1/S1"),
			"b2/Q0": one("b2/S1"),
			"b2/Q1": one("b2/S2"),
		}},
		{UnitObservation, map[string]map[string]int{ // b2 has none
			"a1/Q0": one("a1/O1:1"),
			"a1/Q1": one("a1/O1:2", "a1/O1:3", "a1/O2:2"),
			"a1/Q2": one("a1/O2:2"),
			"a1/Q3": one("a1/O1:1"),
			"a1/Q5": one("a1/O1:2", "a1/O1:3"),
		}},
		{UnitSummary, map[string]map[string]int{
			"a1/Q0": one("a1/Sum1"),
			"a1/Q1": one("a1/Sum1", "a1/Sum2"),
			"a1/Q2": one("a1/Sum2"),
			"a1/Q3": one("a1/Sum1"),
			"a1/Q5": one("a1/Sum1"),
		}},
	}
	for _, tc := range tests {
		if got := d.Qrels(tc.unit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s qrels\n got %v\nwant %v", tc.unit, got, tc.want)
		}
	}
}
