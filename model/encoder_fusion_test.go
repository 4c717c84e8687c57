package model

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
)

// encoderFusionForms are the graph forms TestEncoderFusionForms checks:
// standard ops only, each contrib kernel alone, and all of them.
var encoderFusionForms = []onnx.EncoderFusion{0, onnx.EncoderFuseSkipNorm, onnx.EncoderFuseGelu, onnx.EncoderFuseAttention, onnx.AllEncoderFusions}

// TestEncoderFusionForms: every encoder graph form, for BERT and XLM-R
// cross-encoders (erf GELU; BERT also with the tanh GELU, which FastGelu
// computes) and their bare-encoder (embedding) classes, scores mixed-length
// padded batches on ONNX Runtime within 1e-4 of the reference pass (logits)
// or 1e-5 per component (pooled embeddings) in float32; the int8 variants
// of the standard-op and the all-fusions form stay within the int8 bound
// of TestEncoderInt8 (0.05 in logit), and the log gives their difference
// from each other.
func TestEncoderFusionForms(t *testing.T) {
	ctx := context.Background()
	type class struct {
		family, act string
		embed       bool
	}
	classes := []class{
		{arch.FamilyBERT, "gelu", false}, {arch.FamilyXLMR, "gelu", false}, {arch.FamilyBERT, "gelu_new", false},
		{arch.FamilyBERT, "gelu", true}, {arch.FamilyXLMR, "gelu", true},
	}
	for ci, c := range classes {
		cfg := arch.TinyEncoder(c.family, c.embed)
		cfg.HiddenAct = c.act
		w, err := arch.RandomEncoder(cfg, uint64(40+ci))
		if err != nil {
			t.Fatal(err)
		}
		ref := NewEncoderReference(w)
		rows := encoderRows(cfg, 9, uint64(7+ci))
		for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
			if q != onnx.QuantNone && c.embed {
				continue // embedding folders are float32 only
			}
			var base []float32 // the int8 standard-op form's logits
			for _, f := range encoderFusionForms {
				if q != onnx.QuantNone && f != 0 && f != onnx.AllEncoderFusions {
					continue // int8 changes the projections only: the standard-op and all-fusions forms suffice
				}
				name := fmt.Sprintf("%s %s embed=%v %v %v", c.family, c.act, c.embed, q, f)
				s := openEncoder(t, encoderGraph(t, w, f, q))
				if c.embed {
					for _, p := range []arch.Pooling{{Mode: arch.PoolCLS, Normalize: true}, {Mode: arch.PoolMean}} {
						got, err := s.Embed(ctx, rows, p)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						want, err := ref.Embed(ctx, rows, p)
						if err != nil {
							t.Fatal(err)
						}
						var flatGot, flatWant []float32
						for i := range got {
							flatGot, flatWant = append(flatGot, got[i]...), append(flatWant, want[i]...)
						}
						assertClose(t, name+" "+string(p.Mode), flatGot, flatWant, 1e-5)
					}
					continue
				}
				got, err := s.Logits(ctx, rows)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want, err := ref.Logits(ctx, rows)
				if err != nil {
					t.Fatal(err)
				}
				if q == onnx.QuantNone {
					assertClose(t, name, got, want, 1e-4)
					spread(t, got)
					continue
				}
				worst, vsBase := 0.0, 0.0
				if base == nil {
					base = got
				}
				for i := range got {
					worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
					vsBase = math.Max(vsBase, math.Abs(float64(got[i]-base[i])))
				}
				t.Logf("%s: max |dlogit| %.3g against the reference, %.3g against the int8 standard-op form", name, worst, vsBase)
				if worst > 0.05 {
					t.Errorf("%s: max |dlogit| %.3g > 0.05", name, worst)
				}
			}
		}
	}
}

// encoderGraph saves w's encoder graph in form f with weights q and
// returns its path.
func encoderGraph(t *testing.T, w *arch.EncoderWeights, f onnx.EncoderFusion, q onnx.Quant) string {
	t.Helper()
	o := onnx.NewEncoderOptions()
	o.Fusion, o.Quant = f, q
	m, err := onnx.BuildEncoder(w, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, onnx.ModelFile)
}
