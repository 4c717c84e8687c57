package index

import (
	"slices"
	"testing"
	"time"
)

var day0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func TestOrder(t *testing.T) {
	o := NewOrder()
	at := func(min int) time.Time { return day0.Add(time.Duration(min) * time.Minute) }
	o.Add("c", "s", at(2))
	o.Add("a", "s", at(0))
	o.Add("b2", "s", at(1))
	o.Add("b1", "s", at(1)) // same time: by ID
	o.Add("x", "other", at(1))
	o.Add("lone", "", at(1)) // no source: no Neighbours
	around := func(id string, w int) []Neighbour {
		var out []Neighbour
		o.Around(id, w, func(n Neighbour) { out = append(out, n) })
		return out
	}
	tests := []struct {
		id   string
		w    int
		want []Neighbour
	}{
		{"a", 1, []Neighbour{{"b1", 1}}},
		{"b1", 1, []Neighbour{{"a", 1}, {"b2", 1}}},
		{"b2", 2, []Neighbour{{"a", 2}, {"b1", 1}, {"c", 1}}},
		{"x", 3, nil},
		{"lone", 3, nil},
		{"missing", 3, nil},
	}
	for _, tc := range tests {
		if got := around(tc.id, tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("around(%s, %d) = %v, want %v", tc.id, tc.w, got, tc.want)
		}
	}
	o.Add("a", "s", at(3)) // moved after c
	o.Delete("b2")
	if got, want := around("c", 1), []Neighbour{{"b1", 1}, {"a", 1}}; !slices.Equal(got, want) {
		t.Errorf("after move and delete: around(c, 1) = %v, want %v", got, want)
	}
	o.Add("x", "", at(0))
	if got := o.Source("x"); got != "" {
		t.Errorf("x re-added without a source still has %q", got)
	}
	if _, ok := o.bySource["other"]; ok {
		t.Error("empty source list kept")
	}
}
