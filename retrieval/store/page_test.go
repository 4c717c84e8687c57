package store

import (
	"errors"
	"fmt"
	"testing"
)

func TestPage(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	var items []Item
	for i := range 25 {
		items = append(items, Item{Memory: mem("a", fmt.Sprintf("m%02d", i)), Vector: vec(i, 4)})
	}
	items = append(items, Item{Memory: mem("b", "other")})
	if err := s.PutBatch(items); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		after     string
		limit     int
		wantFirst string
		wantN     int
		wantNext  string
	}{
		{"first page", "", 10, "m00", 10, "m09"},
		{"middle", "m09", 10, "m10", 10, "m19"},
		{"last partial", "m19", 10, "m20", 5, ""},
		{"exact end", "m14", 10, "m15", 10, ""},
		{"after a missing key", "m105", 3, "m11", 3, "m13"},
		{"past the end", "zz", 10, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, next, err := s.Page("a", tc.after, tc.limit, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tc.wantN || next != tc.wantNext {
				t.Fatalf("got %d records, next %q; want %d, %q", len(recs), next, tc.wantN, tc.wantNext)
			}
			if tc.wantN > 0 && recs[0].Memory.ID != tc.wantFirst {
				t.Fatalf("first %q, want %q", recs[0].Memory.ID, tc.wantFirst)
			}
			for _, r := range recs {
				if r.Memory.Namespace != "a" || len(r.Vector) != 4 {
					t.Fatalf("record %+v: wrong namespace or vector", r)
				}
			}
		})
	}
	// Walking every page visits every memory exactly once.
	seen := map[string]bool{}
	after := ""
	for {
		recs, next, err := s.Page("a", after, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if seen[r.Memory.ID] || r.Vector != nil {
				t.Fatalf("%s seen twice or vector loaded unasked", r.Memory.ID)
			}
			seen[r.Memory.ID] = true
		}
		if next == "" {
			break
		}
		after = next
	}
	if len(seen) != 25 {
		t.Fatalf("walk saw %d memories, want 25", len(seen))
	}
	for _, bad := range []struct {
		ns    string
		limit int
	}{{"a", 0}, {"a", MaxPage + 1}, {"../x", 5}} {
		if _, _, err := s.Page(bad.ns, "", bad.limit, false); !errors.Is(err, ErrInvalid) {
			t.Errorf("Page(%q, limit %d) err = %v, want ErrInvalid", bad.ns, bad.limit, err)
		}
	}
}

func TestGetMany(t *testing.T) {
	s, _ := openTemp(t, Options{NoSync: true})
	if err := s.PutBatch([]Item{{Memory: mem("a", "x"), Vector: vec(1, 3)}, {Memory: mem("a", "y")}, {Memory: mem("b", "z")}}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.GetMany("a", []string{"y", "missing", "x", "z"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Memory.ID != "y" || recs[1].Memory.ID != "x" {
		t.Fatalf("got %+v, want y then x (z is in another namespace)", recs)
	}
	if recs[0].Vector != nil {
		t.Fatal("y has no vector")
	}
	equalVec(t, recs[1].Vector, vec(1, 3))
	if recs, err := s.GetMany("nope", []string{"x"}, false); err != nil || len(recs) != 0 {
		t.Fatalf("missing namespace: %v, %v", recs, err)
	}
	if _, err := s.GetMany("a", []string{"bad/id"}, false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad id err = %v, want ErrInvalid", err)
	}
}
