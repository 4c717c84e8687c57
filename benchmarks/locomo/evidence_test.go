package locomo

import (
	"reflect"
	"testing"
)

func TestParseDiaID(t *testing.T) {
	tests := []struct {
		in, want string // want "" means rejected
	}{
		{"D1:3", "D1:3"},
		{"D30:05", "D30:5"},   // zero padding
		{"D:11:26", "D11:26"}, // stray colon
		{" d2:1 ", "D2:1"},
		{"4:7", "D4:7"},
		{"D007:000", "D7:0"},
		{"D", ""},
		{"", ""},
		{"D1", ""},
		{"D1:", ""},
		{"D:1", ""},
		{"D1:2:3", ""},
		{"D1:-2", ""},
		{"D1:2a", ""},
		{"D8:6; D9:17", ""}, // splitting is resolveEvidence's job
		{"D99999999999:1", ""},
		{"D１:2", ""}, // fullwidth digit
	}
	for _, tc := range tests {
		got, _, _, ok := parseDiaID(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("parseDiaID(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestResolveEvidence(t *testing.T) {
	turns := map[string]bool{"D1:1": true, "D1:2": true, "D2:5": true, "D11:26": true}
	tests := []struct {
		name string
		raw  []string
		want []string
		st   Stats // only the evidence counters
	}{
		{"clean", []string{"D1:1", "D2:5"}, []string{"D1:1", "D2:5"}, Stats{EvidenceIDs: 2}},
		{"none", nil, nil, Stats{}},
		{"zero padded", []string{"D2:05"}, []string{"D2:5"}, Stats{EvidenceIDs: 1, EvidenceRepaired: 1}},
		{"stray colon", []string{"D:11:26"}, []string{"D11:26"}, Stats{EvidenceIDs: 1, EvidenceRepaired: 1}},
		{"repair to no turn", []string{"D:11:27", "D3:01"}, nil, Stats{EvidenceIDs: 2, DroppedMalformed: 2}},
		{"bare D", []string{"D", "D1:1"}, []string{"D1:1"}, Stats{EvidenceIDs: 2, DroppedMalformed: 1}},
		{"empty and separators", []string{"", " ; "}, nil, Stats{EvidenceIDs: 2, DroppedMalformed: 2}},
		{"dangling", []string{"D10:19", "D1:2"}, []string{"D1:2"}, Stats{EvidenceIDs: 2, DroppedDangling: 1}},
		{"split", []string{"D1:1; D2:5"}, []string{"D1:1", "D2:5"}, Stats{EvidenceIDs: 2, EvidenceSplit: 1, EvidenceRepaired: 2}},
		{"split with a dangling part", []string{"D1:1,D9:9"}, []string{"D1:1"}, Stats{EvidenceIDs: 2, EvidenceSplit: 1, EvidenceRepaired: 1, DroppedDangling: 1}},
		{"duplicates after repair", []string{"D1:1", "D1:01", "D1:1"}, []string{"D1:1"}, Stats{EvidenceIDs: 3, DuplicateEvidence: 2}},
		{"order kept", []string{"D2:5", "D1:1"}, []string{"D2:5", "D1:1"}, Stats{EvidenceIDs: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st Stats
			got := resolveEvidence(tc.raw, turns, &st)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(st, tc.st) {
				t.Errorf("got %v %+v\nwant %v %+v", got, st, tc.want, tc.st)
			}
		})
	}
}

func TestResolveLinks(t *testing.T) {
	turns := map[string]bool{"D15:3": true, "D15:5": true}
	got, dropped := resolveLinks([]string{"D15:3,D15:5", "D15:03", "D", "D1:1"}, turns)
	if !equal(got, []string{"D15:3", "D15:5"}) || dropped != 2 {
		t.Errorf("got %v, %d dropped; want [D15:3 D15:5], 2", got, dropped)
	}
}
