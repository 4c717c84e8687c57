package scheduler

import (
	"context"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/internal/batching"
)

// mkPending builds a sorted queue from (length, arrival rank) pairs, each
// rank its own request (as pairs arriving apart are).
func mkPending(spec ...[2]int) []pair {
	var ps []pair
	reqs := map[int]*request{}
	for i, s := range spec {
		if reqs[s[1]] == nil {
			reqs[s[1]] = &request{ctx: context.Background()}
		}
		ps = append(ps, pair{req: reqs[s[1]], seq: seq(1, s[0]), idx: i, order: uint64(s[1])})
	}
	slices.SortFunc(ps, cmpPair)
	return ps
}

func TestPlan(t *testing.T) {
	cfg := func(batchTokens, maxBatch int, ratio float64) Config {
		c := DefaultConfig()
		c.BatchTokens, c.MaxBatch, c.MaxPadRatio = batchTokens, maxBatch, ratio
		return c
	}
	tests := []struct {
		name     string
		cfg      Config
		spec     [][2]int // length, arrival rank
		wantLens []int    // lengths in the batch
		wantFull bool
	}{
		{"single pair waits to fill", cfg(8192, 32, 1.25), [][2]int{{10, 0}}, []int{10}, false},
		{"max batch makes it full", cfg(8192, 3, 1.25), [][2]int{{5, 0}, {5, 1}, {5, 2}, {5, 3}, {5, 4}}, []int{5, 5, 5}, true},
		{"token budget makes it full", cfg(120, 32, 1.25), [][2]int{{50, 0}, {50, 1}, {50, 2}}, []int{50, 50}, true},
		{"oversize pair runs alone at once", cfg(100, 32, 1.25), [][2]int{{200, 0}, {200, 1}}, []int{200}, true},
		{"oldest pair anchors the batch", cfg(8192, 32, 1.25), [][2]int{{10, 5}, {10, 6}, {100, 0}, {100, 1}}, []int{100, 100}, false},
		{"cheaper neighbour first", cfg(8192, 2, 1.25), [][2]int{{90, 1}, {100, 0}, {120, 2}}, []int{90, 100}, true},
		{"longer neighbour when cheaper", cfg(8192, 2, 1.25), [][2]int{{50, 1}, {100, 0}, {101, 2}}, []int{100, 101}, true},
		{"pad ratio 1 batches equal lengths only", cfg(8192, 32, 1), [][2]int{{10, 0}, {11, 1}, {10, 2}}, []int{10, 10}, false},
		{"pad ratio keeps far lengths apart", cfg(8192, 32, 1.25), [][2]int{{4, 1}, {4, 2}, {400, 0}}, []int{400}, false},
		{"large pad ratio still groups by length", cfg(8192, 3, 100), [][2]int{{4, 1}, {4, 2}, {300, 3}, {400, 0}, {410, 4}}, []int{300, 400, 410}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := mkPending(tt.spec...)
			a, lo, hi, full, _, _ := plan(ps, &tt.cfg, paddedCost, nil, nil)
			if ps[a].order != 0 {
				t.Errorf("anchor has rank %d, want the oldest (0)", ps[a].order)
			}
			if a < lo || a >= hi {
				t.Errorf("anchor %d outside window [%d, %d)", a, lo, hi)
			}
			var lens []int
			for _, p := range ps[lo:hi] {
				lens = append(lens, len(p.seq))
			}
			if !slices.Equal(lens, tt.wantLens) || full != tt.wantFull {
				t.Errorf("batch %v full %v, want %v full %v", lens, full, tt.wantLens, tt.wantFull)
			}
		})
	}
}

func TestTakeSkipsEndedRequests(t *testing.T) {
	cfg := testConfig()
	q := newQueue(cfg, nopObserver{}, paddedCost, nil)
	dead, cancel := context.WithCancel(context.Background())
	rDead := &request{ctx: dead, done: make(chan struct{}), logits: make([]float32, 2), left: 2}
	rLive := &request{ctx: context.Background(), done: make(chan struct{}), logits: make([]float32, 2), left: 2}
	if err := q.admit(rDead, [][]int{seq(1, 3), seq(1, 3)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := q.admit(rLive, [][]int{seq(2, 3), seq(2, 3)}, nil); err != nil {
		t.Fatal(err)
	}
	cancel() // as if the batcher got there before Submit noticed
	timer := newStoppedTimer()
	batch, _, ok := q.take(nil, timer)
	if !ok || len(batch) != 2 {
		t.Fatalf("take: %d pairs, ok %v; want 2", len(batch), ok)
	}
	for _, p := range batch {
		if p.req != rLive {
			t.Errorf("batch carries a pair of a cancelled request")
		}
	}
	if n := q.stats().Queued; n != 0 {
		t.Errorf("queued %d after take, want 0", n)
	}
}

// packedCost is a packed engine's cost: every row's tokens after the prefix
// all rows share, plus that prefix once (no padding).
func packedCost(seqs [][]int) int {
	shared := len(seqs[0])
	for _, s := range seqs[1:] {
		n := 0
		for n < min(shared, len(s)) && s[n] == seqs[0][n] {
			n++
		}
		shared = n
	}
	total := shared
	for _, s := range seqs {
		total += len(s) - shared
	}
	return total
}

// TestPlanPackedCost: with the engine's own cost, a request whose pairs
// share a 74-token prefix and carry documents of 10 to 150 tokens is one
// batch (it fits the budget), where counting padding splits it; and the
// token budget is counted in computed tokens.
func TestPlanPackedCost(t *testing.T) {
	prefix := seq(7, 74)
	var spec [][]int
	for i := range 20 {
		spec = append(spec, append(slices.Clone(prefix), seq(100+i, 10+i*140/19)...))
	}
	mk := func() []pair {
		r := &request{ctx: context.Background()}
		var ps []pair
		for i, s := range spec {
			ps = append(ps, pair{req: r, seq: s, idx: i, order: uint64(i)})
		}
		slices.SortFunc(ps, cmpPair)
		return ps
	}
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name      string
		cost      CostFunc
		budget    int
		wantRows  int
		wantCost  int
		wantFull  bool
		checkCost bool
	}{
		{"padded cost splits by length", paddedCost, cfg.BatchTokens, 0, 0, false, false},
		{"packed cost: one call", packedCost, cfg.BatchTokens, 20, packedCost(spec), false, true},
		{"packed cost: budget in computed tokens", packedCost, 74 + 10 + 17 + 24, 3, 74 + 10 + 17 + 24, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.BatchTokens = tc.budget
			ps := mk()
			_, lo, hi, full, computed, _ := plan(ps, &c, tc.cost, nil, nil)
			rows := hi - lo
			if tc.wantRows == 0 {
				if rows == len(spec) {
					t.Fatalf("padded cost took all %d rows in one batch", rows)
				}
				return
			}
			if rows != tc.wantRows || full != tc.wantFull || (tc.checkCost && computed != tc.wantCost) {
				t.Errorf("rows %d full %v computed %d, want %d %v %d", rows, full, computed, tc.wantRows, tc.wantFull, tc.wantCost)
			}
		})
	}
}

// TestPlanRequestShortestFirst: a request's pairs batch from its shortest
// up, whatever document came first, into the call batching.Plan (the
// direct path) makes of them.
func TestPlanRequestShortestFirst(t *testing.T) {
	r := &request{ctx: context.Background()}
	lens := []int{100, 40, 44, 48, 200}
	var ps []pair
	for i, n := range lens {
		ps = append(ps, pair{req: r, seq: seq(1, n), idx: i, order: uint64(i)})
	}
	slices.SortFunc(ps, cmpPair)
	c := DefaultConfig()
	a, lo, hi, _, _, _ := plan(ps, &c, paddedCost, nil, nil)
	var got []int
	for _, p := range ps[lo:hi] {
		got = append(got, len(p.seq))
	}
	seqs := make([][]int, len(lens))
	for i, n := range lens {
		seqs[i] = seq(1, n)
	}
	var want []int
	for _, i := range batching.Plan(seqs, c.MaxBatch, c.BatchTokens, c.MaxPadRatio, batching.Padded, nil, false)[0] {
		want = append(want, lens[i])
	}
	if !slices.Equal(got, want) || len(ps[a].seq) != 40 {
		t.Errorf("batch %v (anchor %d tokens), want %v from the shortest (40)", got, len(ps[a].seq), want)
	}
}

// TestPlanCallBound: an engine's own bound on a call (batching.Fits: here
// rows × longest² like an encoder's attention scores) stops a batch from
// growing and makes it full, while short pairs still batch to the token
// budget and a pair over the bound runs alone.
func TestPlanCallBound(t *testing.T) {
	const bound = 2 * 100 * 100
	var fits batching.Fits = func(seqs [][]int) bool {
		longest := 0
		for _, s := range seqs {
			longest = max(longest, len(s))
		}
		return len(seqs)*longest*longest <= bound
	}
	long := [][2]int{{100, 0}, {100, 1}, {100, 2}, {100, 3}}
	for _, tc := range []struct {
		name     string
		fits     batching.Fits
		spec     [][2]int // length, arrival rank
		wantLens []int
		wantFull bool
	}{
		{"no bound: one batch", nil, long, []int{100, 100, 100, 100}, false},
		{"long pairs: as many rows as the bound allows", fits, long, []int{100, 100}, true},
		{"short pairs batch to the token budget", fits, [][2]int{{10, 0}, {10, 1}, {10, 2}, {10, 3}, {10, 4}}, []int{10, 10, 10, 10, 10}, false},
		{"a pair over the bound runs alone", fits, [][2]int{{300, 0}, {300, 1}}, []int{300}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			ps := mkPending(tc.spec...)
			_, lo, hi, full, _, _ := plan(ps, &c, paddedCost, tc.fits, nil)
			var lens []int
			for _, p := range ps[lo:hi] {
				lens = append(lens, len(p.seq))
			}
			if !slices.Equal(lens, tc.wantLens) || full != tc.wantFull {
				t.Errorf("batch %v full %v, want %v full %v", lens, full, tc.wantLens, tc.wantFull)
			}
		})
	}
}
