package model

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// quantScoreTol bounds |quantised - float32| scores on the tiny random
// model (hidden size 64). Measured: int8 0.027, int8-block32 0.015,
// int8-group128 0.027 (its groups of 128 are the whole row at this
// width), int8-mixed 0.029 (TestQuantMatchesFloat logs them). Random weights have none of a trained model's activation
// outliers, so this bounds our arithmetic, not the error on real weights:
// `rerankd-bench bench --quant` measures that on the model it is given.
var quantScoreTol = map[onnx.Quant]float64{
	onnx.QuantInt8: 0.05, onnx.QuantInt8Block32: 0.03, onnx.QuantInt8Group128: 0.05, onnx.QuantInt8Mixed: 0.05, onnx.QuantInt8Smooth: 0.05, onnx.QuantInt8SmoothBlock32: 0.03,
}

// quantSameTol bounds |logit - logit| of one quantised variant between its
// plain and shared-prefix graphs, or alone and in a batch. Float32 agrees
// within ~2e-6 there (the same sums in another order); quantising an
// activation per row can turn such a difference into one rounding step of
// one activation, measured up to 2.4e-5 on the tiny model (which of its
// ~1e5 activations land near a step changes with the graph's form).
// Quantising per tensor, what the bound guards against, moves a logit by
// ~1e-2. The MatMulNBits variants moved a logit more between a
// shared-prefix batch and the same row alone: int8-block32 by 2.2e-4,
// int8-smooth-block32 by 3.9e-3 (the one-letter document); for block32,
// plain and alone agree within 1e-6, and a MatMul chain's row gives the same output
// at every row count (1-64). The cause is not isolated; the bounds are
// the measured values with headroom, below each variant's score error.
func quantSameTol(q onnx.Quant) float64 {
	switch q {
	case onnx.QuantInt8Block32:
		return 5e-4
	case onnx.QuantInt8SmoothBlock32:
		return 8e-3
	}
	return 1e-4
}

// tinyQuantModel writes (once per run) a tiny model with every quantised
// variant (testQuants), its weights external as a full-size model's are:
// the variants' graphs share one data file instead of each carrying the
// float32 embedding inline (TestGraphIOMatchesRuntime reads an inline
// int8 folder).
func tinyQuantModel(t testing.TB) string {
	t.Helper()
	return fixture.Model(t, arch.Tiny(), 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), Quants: testQuants(), ForceExternal: true})
}

// testQuants is every quantised variant, or with -short int8 alone (the
// smoothed variants' calibration runs the reference pass).
func testQuants() []onnx.Quant {
	if testing.Short() {
		return []onnx.Quant{onnx.QuantInt8}
	}
	return onnx.Quants()
}

func openQuant(t testing.TB, dir string, q onnx.Quant, plain bool, cfg rerank.ScorerConfig) *rerank.Scorer {
	t.Helper()
	o := DefaultOptions()
	o.RuntimeLib, o.Scorer, o.Quant, o.NoSharedPrefix = testenv.ORTLib(), cfg, q, plain
	o.Session.IntraOpThreads = 2
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatalf("open %v (plain %v): %v", q, plain, err)
	}
	if info.Quant != q || info.SharedPrefix == plain {
		t.Fatalf("info %+v: want quant %v, shared prefix %v", info, q, !plain)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestQuantMatchesFloat: each quantised variant scores like the float32
// graph within its documented bound; its shared-prefix graph equals its
// plain graph within quantSameTol; and a document's score does not depend
// on the batch it is in beyond that (activations are quantised per row,
// not per tensor).
func TestQuantMatchesFloat(t *testing.T) {
	dir := tinyQuantModel(t)
	cfg := rerank.DefaultScorerConfig()
	cfg.Prompt.MaxLength = 256
	docs := append(mixedDocs(11), "x", strings.Repeat("a long memory ", 300))
	req := rerank.Request{Query: query, Docs: docs}
	ref := scoreAll(t, openQuant(t, dir, onnx.QuantNone, true, cfg), req)
	for _, q := range testQuants() {
		t.Run(q.String(), func(t *testing.T) {
			plain := openQuant(t, dir, q, true, cfg)
			shared := openQuant(t, dir, q, false, cfg)
			got, gotShared := scoreAll(t, plain, req), scoreAll(t, shared, req)
			worst, moved := 0.0, 0
			for i := range ref {
				d := math.Abs(got[i].Score - ref[i].Score)
				worst = max(worst, d)
				if d > 1e-6 {
					moved++
				}
				if d > quantScoreTol[q] {
					t.Errorf("doc %d: %v score %.6f, float32 %.6f (|d| %.2g > %g)", i, q, got[i].Score, ref[i].Score, d, quantScoreTol[q])
				}
				if math.Abs(gotShared[i].Logit-got[i].Logit) > quantSameTol(q) {
					t.Errorf("doc %d: shared-prefix logit %.7f, plain %.7f", i, gotShared[i].Logit, got[i].Logit)
				}
			}
			if moved == 0 {
				t.Errorf("%v scores equal float32's exactly: the variant is not quantised", q)
			}
			t.Logf("%v: max |score - float32| %.2g", q, worst)

			// Batch independence: one document alone vs in the batch.
			one := cfg
			one.MaxBatch = 1
			single, err := shared.WithConfig(one)
			if err != nil {
				t.Fatal(err)
			}
			alone := scoreAll(t, single, req)
			for i := range alone {
				if d := math.Abs(alone[i].Logit - gotShared[i].Logit); d > quantSameTol(q) {
					t.Errorf("doc %d: logit alone %.7f, in a batch %.7f", i, alone[i].Logit, gotShared[i].Logit)
				}
			}
		})
	}
}

// TestQuantMissingVariant: asking for a variant the folder lacks is an
// error naming the command that writes it, never a silent float32 run.
func TestQuantMissingVariant(t *testing.T) {
	dir := tinyModel(t, onnx.HeadLogit, true)
	for _, q := range onnx.Quants() {
		if _, err := os.Stat(filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, q))); err == nil {
			t.Fatalf("fixture unexpectedly has %v", q)
		}
		o := DefaultOptions()
		o.RuntimeLib, o.Quant = testenv.ORTLib(), q
		if _, _, err := Open(dir, o); err == nil || !strings.Contains(err.Error(), "--quant "+q.String()) {
			t.Errorf("Open %v: err %v, want one naming --quant %v", q, err, q)
		}
	}
	o := DefaultOptions()
	o.Engine, o.Quant = EngineReference, onnx.QuantInt8
	if err := o.Validate(); err == nil {
		t.Error("reference engine with int8: want a validation error")
	}
}

// TestQuantKernel runs one quantised projection through ORT against a Go
// simulation of the same integer arithmetic (per-row activation scale,
// round half to even, int32 accumulation), which pins down the weight
// layout and the kernel's semantics; and against the float product.
func TestQuantKernel(t *testing.T) {
	const dim, rows = 64, 5
	fp := onnx.BuildMatMulChain(1, dim)
	w := floatsOf(t, fp, "w0") // [in, out]: y = x·W
	x := make([]float32, rows*dim)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	x[3*dim+7] = 40 // an outlier in row 3 must not change the other rows
	for i := range dim {
		x[4*dim+i] = 0 // an all-zero row
	}
	got := runChain(t, onnx.BuildQuantChain(1, dim, onnx.QuantInt8), x, rows, dim)
	want := simulateInt8(x, w, rows, dim)
	exact := make([]float64, rows*dim)
	for r := range rows {
		for c := range dim {
			for k := range dim {
				exact[r*dim+c] += float64(x[r*dim+k]) * float64(w[k*dim+c])
			}
		}
	}
	var errSim, errFloat, norm float64
	for i := range got {
		errSim = max(errSim, math.Abs(float64(got[i])-want[i]))
		errFloat = max(errFloat, math.Abs(float64(got[i])-exact[i]))
		norm = max(norm, math.Abs(exact[i]))
	}
	t.Logf("int8 projection: max |ORT - simulation| %.2g, max |ORT - float| %.2g (max |y| %.2g)", errSim, errFloat, norm)
	if errSim > 1e-4*norm {
		t.Errorf("ORT differs from the simulated int8 arithmetic by %g", errSim)
	}
	if errFloat > 0.05*norm || errFloat == 0 {
		t.Errorf("int8 vs float error %g (max |y| %g): want small and non-zero", errFloat, norm)
	}
	for c := range dim {
		if got[4*dim+c] != 0 {
			t.Fatalf("zero row gives %v", got[4*dim:5*dim])
		}
	}
}

// simulateInt8 computes onnx.QuantInt8's projection in Go: y = x·W with W
// [in, out] quantised per output column and x per row.
func simulateInt8(x, w []float32, rows, dim int) []float64 {
	wq := make([]int32, dim*dim)
	ws := make([]float64, dim)
	for c := range dim {
		var amax float32
		for k := range dim {
			amax = max(amax, float32(math.Abs(float64(w[k*dim+c]))))
		}
		s := amax / 127
		ws[c] = float64(s)
		for k := range dim {
			wq[k*dim+c] = int32(math.RoundToEven(float64(w[k*dim+c] / s)))
		}
	}
	y := make([]float64, rows*dim)
	for r := range rows {
		var amax float32
		for k := range dim {
			amax = max(amax, float32(math.Abs(float64(x[r*dim+k]))))
		}
		s := max(amax, 1e-30) / 127
		xq := make([]int32, dim)
		for k := range dim {
			xq[k] = int32(min(max(math.RoundToEven(float64(x[r*dim+k]/s)), -128), 127))
		}
		for c := range dim {
			var acc int32
			for k := range dim {
				acc += xq[k] * wq[k*dim+c]
			}
			y[r*dim+c] = float64(float32(acc)*s) * ws[c]
		}
	}
	return y
}

func floatsOf(t *testing.T, m *onnx.Model, name string) []float32 {
	t.Helper()
	for _, init := range m.Proto.GetGraph().GetInitializer() {
		if init.GetName() == name {
			raw := init.GetRawData()
			f := make([]float32, len(raw)/4)
			for i := range f {
				f[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			return f
		}
	}
	t.Fatalf("no initializer %s", name)
	return nil
}

func runChain(t *testing.T, m *onnx.Model, x []float32, rows, dim int) []float32 {
	t.Helper()
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultSessionConfig()
	cfg.IntraOpThreads = 1
	opts, err := cfg.options()
	if err != nil {
		t.Fatal(err)
	}
	defer release(opts)
	sess, err := ort.NewDynamicAdvancedSession(filepath.Join(dir, onnx.ModelFile), []string{"x"}, []string{"y"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer release(sess)
	in, err := ort.NewTensor(ort.NewShape(int64(rows), int64(dim)), x)
	if err != nil {
		t.Fatal(err)
	}
	defer release(in)
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(rows), int64(dim)))
	if err != nil {
		t.Fatal(err)
	}
	defer release(out)
	if err := sess.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), out.GetData()...)
}
