package filter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func fields() Fields {
	return Fields{ID: "m1", Time: t0, Source: "/home/a/proj", Metadata: memory.Metadata{
		"kind": memory.String("fact"), "n": memory.Number(5), "done": memory.Bool(false),
		"when": memory.String("2025-02-01T00:00:00Z"),
	}}
}

func eq(k string, v any) Condition     { return Condition{Key: k, Match: &Match{Value: v}} }
func in(k string, v ...any) Condition  { return Condition{Key: k, Match: &Match{Any: v}} }
func out(k string, v ...any) Condition { return Condition{Key: k, Match: &Match{Except: v}} }
func rng(k string, r Range) Condition  { return Condition{Key: k, Range: &r} }

func TestMatch(t *testing.T) {
	cases := []struct {
		name string
		f    Filter
		want bool
	}{
		{"equal string", Filter{Must: []Condition{eq("kind", "fact")}}, true},
		{"metadata. prefix", Filter{Must: []Condition{eq("metadata.kind", "fact")}}, true},
		{"unequal string", Filter{Must: []Condition{eq("kind", "event")}}, false},
		{"number equal", Filter{Must: []Condition{eq("n", 5.0)}}, true},
		{"string never equals number", Filter{Must: []Condition{eq("n", "5")}}, false},
		{"bool equal", Filter{Must: []Condition{eq("done", false)}}, true},
		{"in", Filter{Must: []Condition{in("kind", "event", "fact")}}, true},
		{"in none", Filter{Must: []Condition{in("kind", "event", "plan")}}, false},
		{"except (ne)", Filter{Must: []Condition{out("kind", "event")}}, true},
		{"except hit", Filter{Must: []Condition{out("kind", "fact")}}, false},
		{"except absent key", Filter{Must: []Condition{out("nope", "x")}}, true},
		{"must_not equal (ne)", Filter{MustNot: []Condition{eq("kind", "fact")}}, false},
		{"source", Filter{Must: []Condition{eq("source", "/home/a/proj")}}, true},
		{"id", Filter{Must: []Condition{in("id", "m1", "m2")}}, true},
		{"range gte lt", Filter{Must: []Condition{rng("n", Range{GTE: 5.0, LT: 6.0})}}, true},
		{"range gt excludes", Filter{Must: []Condition{rng("n", Range{GT: 5.0})}}, false},
		{"range lte", Filter{Must: []Condition{rng("n", Range{LTE: 5.0})}}, true},
		{"range on a string key", Filter{Must: []Condition{rng("kind", Range{GTE: 1.0})}}, false},
		{"range absent key", Filter{Must: []Condition{rng("nope", Range{GTE: 1.0})}}, false},
		{"time range", Filter{Must: []Condition{rng("time", Range{GTE: "2025-03-01T00:00:00Z", LT: "2025-03-02T00:00:00Z"})}}, true},
		{"time range before", Filter{Must: []Condition{rng("time", Range{LT: "2025-03-01T12:00:00Z"})}}, false},
		{"time range offset", Filter{Must: []Condition{rng("time", Range{LTE: "2025-03-01T13:00:00+01:00"})}}, true},
		{"metadata time string", Filter{Must: []Condition{rng("when", Range{GTE: "2025-01-01T00:00:00Z"})}}, true},
		{"metadata time string vs number bound", Filter{Must: []Condition{rng("when", Range{GTE: 1.0})}}, false},
		{"is_empty absent", Filter{Must: []Condition{{IsEmpty: "nope"}}}, true},
		{"is_empty present", Filter{Must: []Condition{{IsEmpty: "kind"}}}, false},
		{"exists", Filter{MustNot: []Condition{{IsEmpty: "kind"}}}, true},
		{"should one", Filter{Should: []Condition{eq("kind", "event"), eq("n", 5.0)}}, true},
		{"should none", Filter{Should: []Condition{eq("kind", "event"), eq("n", 6.0)}}, false},
		{"nested or inside and", Filter{Must: []Condition{eq("kind", "fact"), {Nested: &Filter{Should: []Condition{eq("n", 1.0), eq("done", false)}}}}}, true},
		{"nested fails", Filter{Must: []Condition{{Nested: &Filter{MustNot: []Condition{eq("n", 5.0)}}}}}, false},
	}
	for _, c := range cases {
		m, err := Compile(&c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.Match(fields()); got != c.want {
			t.Errorf("%s: Match = %v, want %v", c.name, got, c.want)
		}
	}
	if m, err := Compile(&Filter{}); m != nil || err != nil || !m.Match(fields()) {
		t.Errorf("empty filter: %v %v", m, err)
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name string
		f    Filter
		want string
	}{
		{"no test", Filter{Must: []Condition{{Key: "k"}}}, "exactly one of match"},
		{"two tests", Filter{Must: []Condition{{Key: "k", Match: &Match{Value: "x"}, Range: &Range{GT: 1.0}}}}, "exactly one of match"},
		{"no key", Filter{Must: []Condition{{Match: &Match{Value: "x"}}}}, "key is missing"},
		{"object value", Filter{Must: []Condition{eq("k", map[string]any{})}}, "not an object"},
		{"two match forms", Filter{Must: []Condition{{Key: "k", Match: &Match{Value: "x", Any: []any{"y"}}}}}, "exactly one of value"},
		{"empty range", Filter{Must: []Condition{rng("n", Range{})}}, "at least one of"},
		{"gt and gte", Filter{Must: []Condition{rng("n", Range{GT: 1.0, GTE: 2.0})}}, "gt and gte"},
		{"bad time", Filter{Must: []Condition{rng("time", Range{GTE: "yesterday"})}}, "RFC 3339"},
		{"time with number", Filter{Must: []Condition{rng("time", Range{GTE: 5.0})}}, "time's bounds"},
		{"mixed bounds", Filter{Must: []Condition{rng("n", Range{GTE: 5.0, LT: "2025-01-01T00:00:00Z"})}}, "a time and the other"},
		{"time equality", Filter{Must: []Condition{eq("time", "2025-01-01T00:00:00Z")}}, "by a range"},
		{"source range", Filter{Must: []Condition{rng("source", Range{GT: 1.0})}}, "by equality"},
		{"too deep", deep(MaxDepth + 1), "nested deeper"},
		{"long key", Filter{Must: []Condition{eq(strings.Repeat("k", 200), "v")}}, "metadata key"},
	}
	for _, c := range cases {
		_, err := Compile(&c.f)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid containing %q", c.name, err, c.want)
		}
	}
	many := Filter{}
	for range MaxConditions + 1 {
		many.Should = append(many.Should, eq("k", "v"))
	}
	if _, err := Compile(&many); err == nil {
		t.Error("too many conditions accepted")
	}
	// Every problem at once.
	_, err := Compile(&Filter{Must: []Condition{{Key: "k"}, rng("n", Range{})}})
	if err == nil || !strings.Contains(err.Error(), "must[0]") || !strings.Contains(err.Error(), "must[1]") {
		t.Errorf("not every problem reported: %v", err)
	}
}

func TestEqualities(t *testing.T) {
	m, err := Compile(&Filter{Must: []Condition{eq("kind", "fact"), in("source", "a", "b"), out("x", "y"), rng("n", Range{GT: 1.0})}})
	if err != nil {
		t.Fatal(err)
	}
	eqs := m.Equalities()
	if len(eqs) != 2 || eqs[0].Key != "kind" || !eqs[1].Source || len(eqs[1].Values) != 2 {
		t.Errorf("equalities %+v", eqs)
	}
}

// deep nests a filter n levels.
func deep(n int) Filter {
	f := Filter{Must: []Condition{eq("k", "v")}}
	for range n - 1 {
		inner := f
		f = Filter{Must: []Condition{{Nested: &inner}}}
	}
	return f
}

// TestParseTime: the metadata strings a time range reads are exactly
// those RFC 3339 reads, the quick refusal included.
func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"2025-02-01T00:00:00Z", true},
		{"2025-02-01T00:00:00.123456789+05:30", true},
		{"2025-02-01", false},
		{"2025-02-01 00:00:00Z", false},
		{"12025-02-01T00:00:00Z", false},
		{"not a time at all, but long", false},
		{"", false},
	} {
		got, ok := ParseTime(tc.s)
		want, err := time.Parse(time.RFC3339Nano, tc.s)
		if ok != tc.ok || ok != (err == nil) || (ok && !got.Equal(want)) {
			t.Errorf("ParseTime(%q) = %v, %v; want ok %v (time.Parse: %v)", tc.s, got, ok, tc.ok, err)
		}
	}
}

// TestIntervals: a matcher names its top-level must ranges, with their
// bounds, for the indexes; ranges elsewhere are not named.
func TestIntervals(t *testing.T) {
	m, err := Compile(&Filter{
		Must: []Condition{eq("kind", "fact"), rng("n", Range{GT: 1.0, LTE: 9.0}),
			rng("time", Range{GTE: "2025-01-01T00:00:00Z"})},
		Should: []Condition{rng("m", Range{LT: 3.0})},
	})
	if err != nil {
		t.Fatal(err)
	}
	iv := m.Intervals()
	if len(iv) != 2 {
		t.Fatalf("%d intervals, want 2: %+v", len(iv), iv)
	}
	n, tm := iv[0], iv[1]
	if n.Time || n.Key != "n" || n.Times || !n.Lo.Set || !n.Lo.Strict || n.Lo.N != 1 || !n.Hi.Set || n.Hi.Strict || n.Hi.N != 9 {
		t.Errorf("numeric interval %+v", n)
	}
	if !tm.Time || !tm.Times || !tm.Lo.Set || tm.Lo.Strict || !tm.Lo.T.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) || tm.Hi.Set {
		t.Errorf("time interval %+v", tm)
	}
	if (*Matcher)(nil).Intervals() != nil {
		t.Error("a nil matcher has intervals")
	}
}
