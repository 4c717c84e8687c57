package model

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// sharedPrefixTol bounds |shared-prefix - plain| for logits and scores: the
// same float32 computation in another order.
const sharedPrefixTol = 1e-5

func openPlain(t testing.TB, dir string, cfg rerank.ScorerConfig) *rerank.Scorer {
	t.Helper()
	o := DefaultOptions()
	o.RuntimeLib, o.Scorer, o.NoSharedPrefix = testenv.ORTLib(), cfg, true
	o.Session.IntraOpThreads = 2
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if info.SharedPrefix {
		t.Fatal("NoSharedPrefix ignored")
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSharedPrefixMatchesPlain: the shared-prefix engine (the default when
// the folder has the graph; on the CPU its attention form,
// onnx.AttentionFormFile) gives the plain graph's scores within 1e-5 for
// several queries, instructions and context turns, mixed document lengths
// (a truncated one included) and batch sizes 1..N.
func TestSharedPrefixMatchesPlain(t *testing.T) {
	for _, external := range []bool{false, true} {
		dir := tinyModel(t, onnx.HeadLogit, external)
		if _, err := os.Stat(filepath.Join(dir, onnx.SharedPrefixFile)); err != nil {
			t.Fatalf("test model has no shared-prefix graph: %v", err)
		}
		docs := append(mixedDocs(13), "x", "Caroline", strings.Repeat("word ", 400), strings.Repeat("a long memory ", 300))
		reqs := []struct {
			name string
			r    rerank.Request
		}{
			{"default instruction", rerank.Request{Query: query, Docs: docs}},
			{"other instruction", rerank.Request{Instruction: "Find memories about hobbies", Query: "What does Melanie paint?", Docs: docs}},
			{"context turns", rerank.Request{Query: "When was that?", Context: []string{"Caroline: I went to a support group.", "Melanie: How was it?"}, Docs: docs}},
			{"one document", rerank.Request{Query: query, Docs: docs[:1]}},
		}
		cfg := rerank.DefaultScorerConfig()
		cfg.Prompt.MaxLength = 256 // the long documents are cut
		plainAll := openPlain(t, dir, cfg)
		o := DefaultOptions()
		o.RuntimeLib, o.Scorer = testenv.ORTLib(), cfg
		o.Session.IntraOpThreads = 2
		sharedAll, info, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sharedAll.Close() })
		if !info.SharedPrefix || !info.FusedAttention || info.Output != OutputLogit {
			t.Fatalf("info %+v: want the shared-prefix engine, its CPU attention form", info)
		}
		worst := 0.0
		for _, maxBatch := range []int{1, 2, 5, 32} {
			cfg.MaxBatch = maxBatch
			plain, err := plainAll.WithConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			shared, err := sharedAll.WithConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range reqs {
				want, got := scoreAll(t, plain, c.r), scoreAll(t, shared, c.r)
				for i := range want {
					d := math.Abs(got[i].Logit - want[i].Logit)
					worst = math.Max(worst, d)
					if d > sharedPrefixTol || math.Abs(got[i].Score-want[i].Score) > sharedPrefixTol {
						t.Errorf("external=%v batch %d %s doc %d: logit %.7f, plain %.7f (|d| %.2g)",
							external, maxBatch, c.name, i, got[i].Logit, want[i].Logit, d)
					}
					if got[i].Tokens != want[i].Tokens || got[i].Truncated != want[i].Truncated {
						t.Errorf("%s doc %d: %+v vs plain %+v", c.name, i, got[i], want[i])
					}
				}
			}
		}
		t.Logf("external=%v: max |shared-prefix - plain| logit %.2g", external, worst)
		if !external { // the sessions are open: reuse them
			checkEngineBatches(t, plainAll, sharedAll)
		}
	}
}

// TestAttentionFormChoice: Open runs the folder's attention form of the
// shared-prefix graph on the CPU unless told otherwise
// (Options.StandardAttention), never with NoSharedPrefix, and runs the
// standard-op form when the folder has no attention form; the two forms
// score alike within sharedPrefixTol.
func TestAttentionFormChoice(t *testing.T) {
	dir := tinyModel(t, onnx.HeadLogit, true)
	bare := filepath.Join(t.TempDir(), "bare") // the same folder without the attention forms
	if err := os.CopyFS(bare, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bare, onnx.AttentionFormFile(onnx.SharedPrefixFile))); err != nil {
		t.Fatal(err)
	}
	r := rerank.Request{Query: query, Docs: mixedDocs(9)}
	var ref []rerank.Score
	for _, c := range []struct {
		name                string
		dir                 string
		standard, noShared  bool
		wantShared, wantAtt bool
	}{
		{"default", dir, false, false, true, true},
		{"standard attention", dir, true, false, true, false},
		{"no shared prefix", dir, false, true, false, false},
		{"folder without the form", bare, false, false, true, false},
	} {
		o := DefaultOptions()
		o.RuntimeLib, o.StandardAttention, o.NoSharedPrefix = testenv.ORTLib(), c.standard, c.noShared
		o.Session.IntraOpThreads = 2
		s, info, err := Open(c.dir, o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if info.SharedPrefix != c.wantShared || info.FusedAttention != c.wantAtt {
			t.Errorf("%s: shared prefix %v, fused attention %v; want %v, %v", c.name, info.SharedPrefix, info.FusedAttention, c.wantShared, c.wantAtt)
		}
		got := scoreAll(t, s, r)
		_ = s.Close()
		if ref == nil {
			ref = got
			continue
		}
		for i := range got {
			if d := math.Abs(got[i].Logit - ref[i].Logit); d > sharedPrefixTol {
				t.Errorf("%s doc %d: logit %.7f, attention form %.7f", c.name, i, got[i].Logit, ref[i].Logit)
			}
		}
	}
}

// checkEngineBatches: the engine alone, fed batches like the server's
// scheduler makes them (pairs of several requests mixed, rows that share
// nothing, two-token rows, duplicates), matches the plain graph; one-token
// rows are refused (an empty prefix crashes ORT).
func checkEngineBatches(t *testing.T, s, sharedScorer *rerank.Scorer) {
	t.Helper()
	plain, shared := s.Engine(), sharedScorer.Engine()
	if _, ok := shared.(*PrefixSession); !ok {
		t.Fatalf("engine is %T, want *PrefixSession", shared)
	}
	var mixed [][]int
	for i, q := range []string{query, "Who adopted a cat?", "Who adopted a dog?"} {
		ps, err := s.Prompts(rerank.Request{Query: q, Docs: mixedDocs(4 + i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			mixed = append(mixed, p.IDs)
		}
	}
	cases := []struct {
		name string
		seqs [][]int
	}{
		{"three requests mixed", mixed},
		{"interleaved", func() [][]int {
			out := slices.Clone(mixed)
			slices.Reverse(out)
			return out
		}()},
		{"nothing shared", [][]int{{9, 8, 7}, {100, 200}, {5000, 17, 17, 17}}},
		{"two-token rows", [][]int{{42, 1}, {42, 1}, {42, 43}, {7, 8}}},
		{"duplicates", [][]int{mixed[0], mixed[0], mixed[0][:10], mixed[0]}},
		{"single row", [][]int{mixed[1]}},
	}
	ctx := context.Background()
	for _, c := range cases {
		want, err := plain.Logits(ctx, c.seqs, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := shared.Logits(ctx, c.seqs, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > sharedPrefixTol {
				t.Errorf("%s row %d: logit %.7f, plain %.7f", c.name, i, got[i], want[i])
			}
		}
	}
	for _, bad := range [][][]int{{{1, 2}, {}}, {{1}}} {
		if _, err := shared.Logits(ctx, bad, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := shared.Logits(cancelled, mixed, nil); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestPlanGroups(t *testing.T) {
	seq := func(prefix []int, rest ...int) []int { return append(slices.Clone(prefix), rest...) }
	sys := []int{1, 2, 3, 4, 5, 6, 7, 8}
	qa, qb := seq(sys, 10, 11, 12, 13, 14, 15), seq(sys, 20, 21, 22, 23, 24, 25)
	cases := []struct {
		name       string
		seqs       [][]int
		wantGroups int
		wantPrefix []int // per group, in order of first row
	}{
		{"empty", nil, 0, nil},
		{"one row", [][]int{{1, 2, 3}}, 1, []int{2}},
		{"one request", [][]int{seq(qa, 30, 31), seq(qa, 40), seq(qa, 50, 51, 52)}, 1, []int{14}},
		{"two requests", [][]int{seq(qa, 30, 31), seq(qb, 40), seq(qa, 50), seq(qb, 60, 61)}, 2, []int{14, 14}},
		{"row is a prefix of another", [][]int{seq(qa), seq(qa, 1, 2, 3)}, 1, []int{13}},
		{"nothing shared", [][]int{{1, 2}, {3, 4, 5}}, 2, []int{1, 2}},
		{"first token shared", [][]int{{1, 2}, {1, 4, 5}}, 1, []int{1}},
		{"one-token row (planned, refused by Logits)", [][]int{{7}, {1, 2, 3}, {1, 2, 4}}, 2, []int{2, 0}},
	}
	for _, c := range cases {
		groups := planGroups(c.seqs, prefixCallTokens)
		if len(groups) != c.wantGroups {
			t.Errorf("%s: %d groups %+v, want %d", c.name, len(groups), groups, c.wantGroups)
			continue
		}
		var seen []int
		for gi, g := range groups {
			slices.Sort(g.rows)
			if g.prefix != c.wantPrefix[gi] {
				t.Errorf("%s: group %d prefix %d, want %d", c.name, gi, g.prefix, c.wantPrefix[gi])
			}
			for _, r := range g.rows {
				if g.prefix >= len(c.seqs[r]) || !slices.Equal(c.seqs[r][:g.prefix], c.seqs[g.rows[0]][:g.prefix]) {
					t.Errorf("%s: row %d does not share group %d's prefix %d", c.name, r, gi, g.prefix)
				}
			}
			seen = append(seen, g.rows...)
		}
		slices.Sort(seen)
		if len(seen) != len(c.seqs) || (len(seen) > 0 && (seen[0] != 0 || seen[len(seen)-1] != len(c.seqs)-1 || len(slices.Compact(seen)) != len(c.seqs))) {
			t.Errorf("%s: rows %v do not cover the batch once", c.name, seen)
		}
	}
}

// TestPlanGroupsRandom: on random batches mixing requests, every plan
// covers each row once with a prefix the rows really share, and costs no
// more than the single call a plain engine would make.
func TestPlanGroupsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		heads := make([][]int, 1+rng.IntN(4))
		for h := range heads {
			heads[h] = []int{1, 2, 3} // a system prompt every request shares
			for range rng.IntN(12) {
				heads[h] = append(heads[h], 10+rng.IntN(3))
			}
		}
		seqs := make([][]int, 1+rng.IntN(24))
		for i := range seqs {
			seqs[i] = slices.Clone(heads[rng.IntN(len(heads))])
			for range 1 + rng.IntN(10) {
				seqs[i] = append(seqs[i], 20+rng.IntN(3))
			}
		}
		groups := planGroups(seqs, prefixCallTokens)
		seen := make([]int, len(seqs))
		cost := 0
		for _, g := range groups {
			cost += prefixCallTokens + g.prefix
			for _, r := range g.rows {
				seen[r]++
				cost += len(seqs[r]) - g.prefix
				if g.prefix < 1 || g.prefix >= len(seqs[r]) || !slices.Equal(seqs[r][:g.prefix], seqs[g.rows[0]][:g.prefix]) {
					t.Fatalf("trial %d: row %d does not share prefix %d of its group", trial, r, g.prefix)
				}
			}
		}
		if slices.ContainsFunc(seen, func(n int) bool { return n != 1 }) {
			t.Fatalf("trial %d: rows covered %v times", trial, seen)
		}
		one := planGroups(seqs, 1<<20) // a huge call cost forces one group
		if len(one) != 1 {
			t.Fatalf("trial %d: %d groups despite the call cost", trial, len(one))
		}
		single := prefixCallTokens + one[0].prefix
		for _, q := range seqs {
			single += len(q) - one[0].prefix
		}
		if cost > single {
			t.Errorf("trial %d: plan costs %d tokens, one call %d", trial, cost, single)
		}
	}
}
