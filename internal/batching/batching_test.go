package batching

import (
	"slices"
	"testing"
)

func seqsOf(lens ...int) [][]int {
	seqs := make([][]int, len(lens))
	for i, n := range lens {
		seqs[i] = make([]int, n)
	}
	return seqs
}

func TestPlan(t *testing.T) {
	// sharedOnce counts a common first token once, as an engine that
	// computes a shared prefix once would: a budget in its terms fits more
	// rows than padding would allow.
	sharedOnce := func(seqs [][]int) int {
		n := 0
		for _, s := range seqs {
			n += len(s) - 1
		}
		return n + 1
	}
	for _, tc := range []struct {
		name             string
		lens             []int
		maxBatch, budget int
		maxPad           float64
		cost             Cost
		same             bool
		want             [][]int
	}{
		{"empty", nil, 4, 100, 0, nil, false, nil},
		{"sorted by length", []int{5, 1, 3}, 4, 100, 0, nil, false, [][]int{{1, 2, 0}}},
		{"stable among equals", []int{2, 1, 2, 1}, 4, 100, 0, nil, false, [][]int{{1, 3, 0, 2}}},
		{"max batch", []int{1, 1, 1, 1, 1}, 2, 100, 0, nil, false, [][]int{{0, 1}, {2, 3}, {4}}},
		{"token budget counts padding", []int{2, 2, 10, 10}, 8, 20, 0, nil, false, [][]int{{0, 1}, {2, 3}}},
		{"padding of a longer row", []int{1, 1, 1, 6}, 8, 12, 0, Padded, false, [][]int{{0, 1, 2}, {3}}},
		{"over-long runs alone", []int{50, 1}, 8, 20, 0, nil, false, [][]int{{1}, {0}}},
		{"same length", []int{3, 2, 3, 2, 4}, 8, 100, 0, nil, true, [][]int{{1, 3}, {0, 2}, {4}}},
		{"the engine's cost", []int{1, 1, 1, 6}, 8, 12, 0, sharedOnce, false, [][]int{{0, 1, 2, 3}}},
		// 10 and 12 pad to 24 of 22 real (1.09); 20 more would make 60 of
		// 42 (1.43 > 1.25): it runs apart, as the server's scheduler plans.
		{"padding ratio", []int{20, 10, 12}, 8, 100, 1.25, nil, false, [][]int{{1, 2}, {0}}},
		{"padding ratio 1: equal lengths only", []int{3, 3, 4}, 8, 100, 1, nil, false, [][]int{{0, 1}, {2}}},
		{"padding ratio off", []int{20, 10, 12}, 8, 100, 0, nil, false, [][]int{{1, 2, 0}}},
		{"packed cost never pads", []int{1, 1, 1, 6}, 8, 12, 1, sharedOnce, false, [][]int{{0, 1, 2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Plan(seqsOf(tc.lens...), tc.maxBatch, tc.budget, tc.maxPad, tc.cost, nil, tc.same)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Errorf("Plan(%v) = %v, want %v", tc.lens, got, tc.want)
			}
			for _, call := range got {
				if len(call) != cap(call) {
					t.Errorf("call %v has spare capacity %d: an append would write into the next call", call, cap(call))
				}
			}
		})
	}
}

func TestPadded(t *testing.T) {
	if got := Padded(seqsOf(1, 4, 2)); got != 12 {
		t.Errorf("Padded = %d, want 12", got)
	}
	if got := Padded(nil); got != 0 {
		t.Errorf("Padded(nil) = %d, want 0", got)
	}
}

func TestCheckTypes(t *testing.T) {
	seqs := [][]int{{1, 2}, {3}}
	for _, tc := range []struct {
		name          string
		types         [][]int
		fits, untyped bool
	}{
		{"none", nil, true, true},
		{"all nil", [][]int{nil, nil}, true, true},
		{"one typed", [][]int{{0, 1}, nil}, true, false},
		{"fewer rows", [][]int{{0, 1}}, false, false},
		{"short row", [][]int{{0}, nil}, false, false},
		{"empty row", [][]int{nil, {}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckTypes(seqs, tc.types); (err == nil) != tc.fits {
				t.Errorf("CheckTypes: %v, want fits %v", err, tc.fits)
			}
			if err := CheckNoTypes(tc.types); (err == nil) != tc.untyped {
				t.Errorf("CheckNoTypes: %v, want untyped %v", err, tc.untyped)
			}
		})
	}
}

// TestPlanFits: the engine's bound on a call (here rows × longest², like a
// padded encoder's attention scores) splits calls of long rows, leaves
// short rows to the token budget and never refuses a single row.
func TestPlanFits(t *testing.T) {
	fits := func(bound int) Fits {
		return func(seqs [][]int) bool {
			longest := 0
			for _, s := range seqs {
				longest = max(longest, len(s))
			}
			return len(seqs)*longest*longest <= bound
		}
	}
	for _, tc := range []struct {
		name string
		lens []int
		fits Fits
		want [][]int
	}{
		{"no bound", []int{100, 100, 100}, nil, [][]int{{0, 1, 2}}},
		{"long rows split", []int{100, 100, 100}, fits(2 * 100 * 100), [][]int{{0, 1}, {2}}},
		{"short rows together", []int{10, 10, 10, 100}, fits(2 * 100 * 100), [][]int{{0, 1, 2}, {3}}},
		{"a row over the bound runs alone", []int{300, 300}, fits(2 * 100 * 100), [][]int{{0}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Plan(seqsOf(tc.lens...), 32, 8192, 0, Padded, tc.fits, false)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Errorf("Plan(%v) = %v, want %v", tc.lens, got, tc.want)
			}
		})
	}
}
