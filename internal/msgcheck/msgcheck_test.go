package msgcheck

import "testing"

func TestProblems(t *testing.T) {
	cases := []struct {
		msg  string
		want int // number of problems
	}{
		{"memory store unavailable: retry", 0},
		{"invalid memory: invalid memory: text is empty", 1},
		{"store: store: open x.db: locked", 2},
		{"open /tmp/a.db: open /tmp/a.db: no such file", 1},
		{"pgping: connect: refused", 1},
		{"recency: post: recency HalfLife must be > 0", 2},
		{"recency.half_life 0s: want a duration > 0", 0},
		{`unknown command "FrobNicate"`, 0},
		{"open /tmp/TestBadInputCLI1/x: no such file", 0},
		{"PostgreSQL refuses: password authentication failed", 0},
		{"value %!d(string=x)", 1},
		{"the maxTokens field", 1},
	}
	for _, c := range cases {
		if got := Problems(c.msg); len(got) != c.want {
			t.Errorf("%q: %v, want %d problems", c.msg, got, c.want)
		}
	}
}
