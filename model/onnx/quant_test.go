package onnx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

func TestQuantNames(t *testing.T) {
	for _, q := range append([]Quant{QuantNone}, Quants()...) {
		got, err := ParseQuant(q.String())
		if err != nil || got != q {
			t.Errorf("ParseQuant(%q) = %v, %v", q.String(), got, err)
		}
	}
	if _, err := ParseQuant("int3"); err == nil {
		t.Error("ParseQuant(int3): want an error")
	}
	cases := []struct {
		base string
		q    Quant
		want string
	}{
		{ModelFile, QuantNone, "model.onnx"},
		{ModelFile, QuantInt8, "model.int8.onnx"},
		{SharedPrefixFile, QuantInt8, "shared_prefix.int8.onnx"},
	}
	for _, c := range cases {
		if got := QuantFile(c.base, c.q); got != c.want {
			t.Errorf("QuantFile(%s, %v) = %s, want %s", c.base, c.q, got, c.want)
		}
	}
}

// TestQuantizeInt8 checks a hand-computed case and, on random rows, the
// symmetric quantiser's bound |w - q*scale| <= scale/2.
func TestQuantizeInt8(t *testing.T) {
	// W [2 out, 3 in]: row 0 scale 2.54/127 = 0.02, row 1 all zero.
	w := []float32{2.54, -1.27, 0.01, 0, 0, 0}
	q, scales := quantizeInt8(w, 2, 3)
	if math.Abs(float64(scales[0])-0.02) > 1e-7 || scales[1] != 0 {
		t.Fatalf("scales %v, want [0.02 0]", scales)
	}
	// Transposed to [in, out]: q[i*2+o].
	want := []int8{127, 0, -64, 0, 0, 0} // -1.27/0.02 = -63.5 rounds to even: -64; 0.01/0.02 = 0.5 -> 0
	for i, b := range q {
		if int8(b) != want[i] {
			t.Errorf("q[%d] = %d, want %d (all %v)", i, int8(b), want[i], q)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	const out, in = 7, 45
	w = randomFloats(rng, out*in)
	q, scales = quantizeInt8(w, out, in)
	for o := range out {
		for i := range in {
			d := math.Abs(float64(w[o*in+i]) - float64(int8(q[i*out+o]))*float64(scales[o]))
			if d > float64(scales[o])/2+1e-7 {
				t.Fatalf("w[%d,%d] error %g > scale/2 %g", o, i, d, scales[o]/2)
			}
		}
	}
}

// TestQuantGraphs: quantised reranker and shared-prefix graphs pass Check,
// use standard ONNX ops only without fusions (with the default ones, only
// the contrib kernels Fusion names, with their opset imported; the block
// variant's MatMulNBits is a contrib kernel too), record
// MetaQuant, and keep no float32 copy of a projection.
func TestQuantGraphs(t *testing.T) {
	w, err := arch.Random(arch.Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	contrib := map[string]bool{"RotaryEmbedding": true, "SkipSimplifiedLayerNormalization": true, "FusedMatMul": true}
	for _, q := range append([]Quant{QuantNone}, Quants()...) {
		for _, fusion := range []Fusion{0, AllFusions} {
			checkQuantGraphs(t, w, q, fusion, contrib)
		}
	}
	bad := NewOptions(5, 6)
	bad.Quant = Quant(9)
	if _, err := BuildReranker(w, bad); err == nil || !strings.Contains(err.Error(), "quantisation") {
		t.Errorf("Quant(9): err %v", err)
	}
}

func checkQuantGraphs(t *testing.T, w *arch.Weights, q Quant, fusion Fusion, contrib map[string]bool) {
	t.Helper()
	opts := NewOptions(5, 6)
	opts.Quant, opts.Fusion = q, fusion
	if q.smooths() {
		opts.Calibration, opts.SmoothAlpha = calibrate(t, w, 1), 0.5
	}
	for name, build := range map[string]func(*arch.Weights, Options) (*Model, error){
		"reranker": BuildReranker, "shared_prefix": BuildSharedPrefix,
	} {
		name = fmt.Sprintf("%s fusion %v", name, fusion)
		m, err := build(w, opts)
		if err != nil {
			t.Fatalf("%v %s: %v", q, name, err)
		}
		if err := m.Check(); err != nil {
			t.Errorf("%v %s: Check: %v", q, name, err)
		}
		used := map[string]bool{}
		for _, n := range m.Proto.GetGraph().GetNode() {
			switch {
			case n.GetDomain() == "":
			case n.GetDomain() == msDomain && fusion != 0 && contrib[n.GetOpType()]:
				used[n.GetOpType()] = true
			case n.GetDomain() == msDomain && q.blockSize() > 0 && n.GetOpType() == "MatMulNBits":
			default:
				t.Errorf("%v %s: node %s (%s) in domain %q", q, name, n.GetName(), n.GetOpType(), n.GetDomain())
			}
		}
		imported := slices.ContainsFunc(m.Proto.GetOpsetImport(), func(o *onnxpb.OperatorSetIdProto) bool { return o.GetDomain() == msDomain })
		if imported != (fusion != 0 || q.blockSize() > 0) || (fusion != 0 && len(used) != len(contrib)) {
			t.Errorf("%v %s: %s imported %v, contrib ops used %v", q, name, msDomain, imported, used)
		}
		var meta string
		for _, p := range m.Proto.GetMetadataProps() {
			if p.GetKey() == MetaQuant {
				meta = p.GetValue()
			}
		}
		if (q == QuantNone && meta != "") || (q != QuantNone && meta != q.String()) {
			t.Errorf("%v %s: %s = %q", q, name, MetaQuant, meta)
		}
		for _, init := range m.Proto.GetGraph().GetInitializer() {
			n := init.GetName()
			if q != QuantNone && strings.HasSuffix(n, arch.LayerTensor(0, arch.GateProj)) {
				t.Errorf("%v %s: float32 projection %s kept", q, name, n)
			}
		}
	}
}

func randomFloats(rng *rand.Rand, n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	return f
}
