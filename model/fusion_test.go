package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/rerank"
)

// fusionForms are the graph forms TestFusionForms checks: standard ops
// only, each contrib kernel alone, and all of them.
var fusionForms = []onnx.Fusion{0, onnx.FuseRotary, onnx.FuseSkipNorm, onnx.FuseScores, onnx.FuseAttention, onnx.AllFusions}

// TestFusionForms: every graph form of the plain and the shared-prefix
// graph, for the Qwen3 layout (q/k norms) and the Qwen2 one (q/k/v biases),
// scores on ONNX Runtime within 1e-4 of the reference pass in float32, the
// shared-prefix graph also with past K/V from its cache (a second call);
// the int8 variants of the standard-op and the all-fusions form score within
// quantScoreTol of the reference (the log gives their difference: the
// forms round differently, and per-row activation quantisation can turn
// that into a quantisation step).
func TestFusionForms(t *testing.T) {
	const yes, no = 7, 3
	for fi, fam := range []struct {
		name string
		cfg  arch.Config
	}{{"qwen3", arch.Tiny()}, {"qwen2", arch.Qwen2Tiny()}} {
		fam.cfg.VocabSize = 1000 // small files: the vocabulary only feeds the embedding lookup
		w, err := arch.Random(fam.cfg, uint64(20+fi))
		if err != nil {
			t.Fatal(err)
		}
		head, err := w.HeadDiff(yes, no)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(fi), 5))
		ids := func(n int) []int {
			out := make([]int, n)
			for i := range out {
				out[i] = rng.IntN(fam.cfg.VocabSize)
			}
			return out
		}
		// Rows sharing a 9-token prefix, of mixed lengths (one token after
		// the prefix up to 24), as a rerank request's pairs.
		prefix := ids(9)
		seqs := [][]int{append(slices.Clone(prefix), ids(1)...)}
		for range 6 {
			seqs = append(seqs, append(slices.Clone(prefix), ids(2+rng.IntN(23))...))
		}
		want := make([]float64, len(seqs))
		for i, s := range seqs {
			l, err := ref.Logit(w, head, s)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = float64(l)
		}
		for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
			var base [][]float32 // the standard-op form's int8 logits, plain and shared
			worst := map[string]float64{}
			for _, f := range fusionForms {
				if q != onnx.QuantNone && f != 0 && f != onnx.AllFusions {
					continue // int8 changes the projections only: the standard-op and all-fusions forms suffice
				}
				name := fmt.Sprintf("%s %v %v", fam.name, q, f)
				plain, shared := fusionLogits(t, w, f, q, yes, no, seqs)
				if q != onnx.QuantNone && base == nil {
					base = [][]float32{plain, shared}
				}
				for g, got := range [][]float32{plain, shared} {
					for i := range got {
						if q != onnx.QuantNone {
							worst[name] = max(worst[name], math.Abs(float64(got[i]-base[g][i])))
							if d := math.Abs(rerank.Sigmoid(float64(got[i])) - rerank.Sigmoid(want[i])); d > quantScoreTol[q] {
								t.Errorf("%s row %d (%d tokens): score |d| %.2g > %g", name, i, len(seqs[i]), d, quantScoreTol[q])
							}
							continue
						}
						d := math.Abs(float64(got[i]) - want[i])
						worst[name] = max(worst[name], d)
						if d > 1e-4 {
							t.Errorf("%s row %d (%d tokens): logit %.6f, reference %.6f", name, i, len(seqs[i]), got[i], want[i])
						}
					}
				}
				against := "reference"
				if q != onnx.QuantNone {
					against = "int8 standard-op form"
				}
				t.Logf("%s: max |logit - %s| %.2g (plain, shared prefix and cached prefix)", name, against, worst[name])
			}
		}
	}
}

// fusionLogits builds w's plain and shared-prefix graphs in form f with
// weights q and scores seqs on each; the shared-prefix logits are the
// second call's, which takes the prefix from the cache as past K/V (and
// must agree with the first, uncached one within sharedPrefixTol).
func fusionLogits(t *testing.T, w *arch.Weights, f onnx.Fusion, q onnx.Quant, yes, no int, seqs [][]int) (plain, shared []float32) {
	t.Helper()
	o := onnx.NewOptions(yes, no)
	o.Fusion, o.Quant = f, q
	cfg := DefaultSessionConfig()
	cfg.IntraOpThreads = 2
	ctx := context.Background()
	for _, build := range []func(*arch.Weights, onnx.Options) (*onnx.Model, error){onnx.BuildReranker, onnx.BuildSharedPrefix} {
		m, err := build(w, o)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, onnx.ModelFile)
		if plain == nil {
			s, err := OpenSession(path, SessionSpec{YesID: yes, NoID: no}, cfg)
			if err != nil {
				t.Fatalf("%v %v plain: %v", q, f, err)
			}
			plain, err = s.Logits(ctx, seqs, nil)
			_ = s.Close()
			if err != nil {
				t.Fatalf("%v %v plain: %v", q, f, err)
			}
			continue
		}
		s, err := OpenPrefixSession(path, cfg, 1<<20)
		if err != nil {
			t.Fatalf("%v %v shared prefix: %v", q, f, err)
		}
		first, err := s.Logits(ctx, seqs, nil)
		if err == nil {
			shared, err = s.Logits(ctx, seqs, nil)
		}
		st, _ := s.CacheStats()
		_ = s.Close()
		if err != nil {
			t.Fatalf("%v %v shared prefix: %v", q, f, err)
		}
		if st.ReusedTokens == 0 {
			t.Errorf("%v %v: the second call reused no cached prefix tokens (%+v)", q, f, st)
		}
		for i := range first {
			if d := math.Abs(float64(first[i] - shared[i])); d > sharedPrefixTol {
				t.Errorf("%v %v row %d: cached prefix logit %.7f, uncached %.7f", q, f, i, shared[i], first[i])
			}
		}
	}
	return plain, shared
}

// TestAttentionBuckets: the shared-prefix graph with its batch split into
// 1, 2, 3 or 8 attention buckets scores within 1e-4 of the reference pass
// for batches of 1 to 7 rows (fewer rows than buckets included), whether
// rows come longest first (the engine's order) or in any order, in the
// standard-op form and with FuseAttention (one Attention node per bucket).
func TestAttentionBuckets(t *testing.T) {
	const yes, no = 7, 3
	cfg := arch.Tiny()
	cfg.VocabSize = 1000
	w, err := arch.Random(cfg, 31)
	if err != nil {
		t.Fatal(err)
	}
	head, err := w.HeadDiff(yes, no)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	ids := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = rng.IntN(cfg.VocabSize)
		}
		return out
	}
	prefix := ids(6)
	var all [][]int
	for _, n := range []int{3, 17, 1, 9, 24, 2, 12} {
		all = append(all, append(slices.Clone(prefix), ids(n)...))
	}
	want := make([]float64, len(all))
	for i, s := range all {
		l, err := ref.Logit(w, head, s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = float64(l)
	}
	sc := DefaultSessionConfig()
	sc.IntraOpThreads = 2
	ctx := context.Background()
	for _, fk := range []struct {
		f onnx.Fusion
		k int
	}{{0, 1}, {0, 2}, {0, 3}, {0, 8}, {onnx.FuseAttention, 1}, {onnx.FuseAttention, 3}, {onnx.FuseAttention, 8}} {
		k := fk.k
		o := onnx.NewOptions(yes, no)
		o.AttentionBuckets, o.Fusion = k, fk.f
		m, err := onnx.BuildSharedPrefix(w, o)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		for _, keep := range []bool{false, true} {
			s, err := OpenPrefixSession(filepath.Join(dir, onnx.ModelFile), sc, 0)
			if err != nil {
				t.Fatal(err)
			}
			s.keepOrder = keep
			worst := 0.0
			for _, n := range []int{1, 2, 3, len(all)} {
				got, err := s.Logits(ctx, all[:n], nil)
				if err != nil {
					t.Fatalf("%v, %d buckets, %d rows: %v", fk.f, k, n, err)
				}
				for i := range got {
					d := math.Abs(float64(got[i]) - want[i])
					worst = max(worst, d)
					if d > 1e-4 {
						t.Errorf("%v, %d buckets, %d rows, caller's order %v: row %d logit %.6f, reference %.6f", fk.f, k, n, keep, i, got[i], want[i])
					}
				}
			}
			_ = s.Close()
			t.Logf("%v, %d buckets, caller's order %v: max |logit - reference| %.2g", fk.f, k, keep, worst)
		}
	}
}
