package index

import (
	"slices"
	"testing"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
)

func TestMemoryTimeTerms(t *testing.T) {
	ny := time.FixedZone("UTC-4", -4*3600)
	tests := []struct {
		at   time.Time
		want []string
	}{
		{time.Date(2023, 10, 13, 9, 0, 0, 0, time.UTC), []string{"@y2023", "@m10", "@d10-13"}},
		// The offset the memory was written with decides the day: in UTC
		// this is 1 June.
		{time.Date(2023, 5, 31, 23, 30, 0, 0, ny), []string{"@y2023", "@m5", "@d5-31"}},
		{time.Time{}, nil},
	}
	for _, tc := range tests {
		if got := TimeTerms(memory.Memory{Time: tc.at}); !slices.Equal(got, tc.want) {
			t.Errorf("TimeTerms(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
