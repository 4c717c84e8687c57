package model

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
)

// encoderRows returns n inputs of mixed lengths (1 up to the model's
// maximum, which exercises the last position rows), ids avoiding the pad
// id, and for a model with token types a second segment of type 1.
func encoderRows(c arch.EncoderConfig, n int, seed uint64) []Encoded {
	rng := rand.New(rand.NewPCG(seed, 0))
	rows := make([]Encoded, n)
	for i := range rows {
		length := 1 + rng.IntN(24)
		if i == 1 {
			length = c.MaxTokens()
		}
		r := Encoded{IDs: make([]int, length)}
		for j := range r.IDs {
			for r.IDs[j] = rng.IntN(c.VocabSize); r.IDs[j] == c.PadID(); {
				r.IDs[j] = rng.IntN(c.VocabSize)
			}
		}
		if c.TypeVocabSize > 1 {
			r.TypeIDs = make([]int, length)
			for j := length / 2; j < length; j++ {
				r.TypeIDs[j] = 1
			}
		}
		rows[i] = r
	}
	return rows
}

// encoderFolder converts a generated checkpoint of cfg stored in dtype
// into an encoder graph, and returns the graph's path and the weights the
// graph holds (read back from it, as the reference engine would).
func encoderFolder(t *testing.T, cfg arch.EncoderConfig, dtype string, q onnx.Quant) (string, *arch.EncoderWeights) {
	t.Helper()
	w, err := arch.RandomEncoder(cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	src, out := t.TempDir(), t.TempDir()
	if err := hf.WriteEncoderCheckpoint(src, w, dtype); err != nil {
		t.Fatal(err)
	}
	loaded, _, err := hf.LoadEncoder(src)
	if err != nil {
		t.Fatal(err)
	}
	opts := onnx.NewEncoderOptions()
	m, err := onnx.BuildEncoder(loaded, opts)
	if err != nil {
		t.Fatal(err)
	}
	back, err := m.EncoderWeights()
	if err != nil {
		t.Fatal(err)
	}
	if q != onnx.QuantNone {
		opts.Quant = q
		if m, err = onnx.BuildEncoder(loaded, opts); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, onnx.ModelFile), back
}

func openEncoder(t *testing.T, path string) *EncoderSession {
	t.Helper()
	s, err := OpenEncoderSession(path, DefaultSessionConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestEncoderORTMatchesReference: each class's graph, from checkpoints in
// every storage type, scores mixed-length batches within 1e-4 of the
// reference pass (logits) or 1e-5 per component (embeddings); a row alone
// scores as in its batch within 1e-5.
func TestEncoderORTMatchesReference(t *testing.T) {
	ctx := context.Background()
	for _, family := range []string{arch.FamilyXLMR, arch.FamilyBERT} {
		for _, embed := range []bool{false, true} {
			for _, dtype := range []string{"F32", "BF16", "F16"} {
				cfg := arch.TinyEncoder(family, embed)
				t.Run(cfg.Architectures[0]+"/"+dtype, func(t *testing.T) {
					path, w := encoderFolder(t, cfg, dtype, onnx.QuantNone)
					s, ref := openEncoder(t, path), NewEncoderReference(w)
					rows := encoderRows(cfg, 9, 3)
					if !embed {
						got, err := s.Logits(ctx, rows)
						if err != nil {
							t.Fatal(err)
						}
						want, err := ref.Logits(ctx, rows)
						if err != nil {
							t.Fatal(err)
						}
						assertClose(t, "logit", got, want, 1e-4)
						alone, err := s.Logits(ctx, rows[:1])
						if err != nil {
							t.Fatal(err)
						}
						assertClose(t, "alone", alone, got[:1], 1e-5)
						spread(t, got)
						return
					}
					for _, p := range []arch.Pooling{{Mode: arch.PoolCLS, Normalize: true}, {Mode: arch.PoolMean}, {Mode: arch.PoolMax, Normalize: true}} {
						got, err := s.Embed(ctx, rows, p)
						if err != nil {
							t.Fatal(err)
						}
						want, err := ref.Embed(ctx, rows, p)
						if err != nil {
							t.Fatal(err)
						}
						for i := range got {
							assertClose(t, string(p.Mode), got[i], want[i], 1e-5)
						}
					}
				})
			}
		}
	}
}

// TestEncoderInt8: the int8 graph stays within a bound of the float32
// reference on the same weights (random weights: a bound, not a quality).
func TestEncoderInt8(t *testing.T) {
	ctx := context.Background()
	for _, family := range []string{arch.FamilyXLMR, arch.FamilyBERT} {
		cfg := arch.TinyEncoder(family, false)
		path, w := encoderFolder(t, cfg, "F32", onnx.QuantInt8)
		rows := encoderRows(cfg, 9, 5)
		got, err := openEncoder(t, path).Logits(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewEncoderReference(w).Logits(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range got {
			worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
		}
		t.Logf("%s int8: max |dlogit| %.3g over %d rows", family, worst, len(rows))
		if worst > 0.05 {
			t.Errorf("%s int8: max |dlogit| %.3g > 0.05", family, worst)
		}
	}
}

func TestEncoderRefusesRows(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyXLMR, false)
	path, _ := encoderFolder(t, cfg, "F32", onnx.QuantNone)
	s := openEncoder(t, path)
	long := Encoded{IDs: make([]int, cfg.MaxTokens()+1)}
	for _, rows := range [][]Encoded{{{}}, {long}, {{IDs: []int{5, 6}, TypeIDs: []int{0}}}} {
		if _, err := s.Logits(context.Background(), rows); err == nil {
			t.Errorf("rows %v: want an error", rows)
		}
	}
}

func assertClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	t.Logf("%s: max |ORT - reference| %.3g", what, worst)
	if worst > tol {
		t.Errorf("%s: max |ORT - reference| %.3g > %g", what, worst, tol)
	}
}

// spread fails when every logit is the same: the test model must tell
// inputs apart for the comparison to mean anything.
func spread(t *testing.T, v []float32) {
	t.Helper()
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi-lo < 1e-3 {
		t.Errorf("logits within %g of each other: the test model does not separate inputs", hi-lo)
	}
}
