package ref

import (
	"math"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestRMSNorm(t *testing.T) {
	// mean(x²) = (1+4+9+16)/4 = 7.5.
	r := 1 / math.Sqrt(7.5+1e-6)
	for _, tc := range []struct {
		x, w []float32
		want []float64
	}{
		{[]float32{1, 2, 3, 4}, []float32{1, 1, 1, 1}, []float64{r, 2 * r, 3 * r, 4 * r}},
		{[]float32{1, 2, 3, 4}, []float32{1, 0.5, 0, 2}, []float64{r, r, 0, 8 * r}},
		{[]float32{0, 0}, []float32{1, 1}, []float64{0, 0}}, // eps keeps it finite
	} {
		near(t, "rmsNorm", rmsNorm(tc.x, tc.w, 1e-6), tc.want, 1e-6)
	}
}

func TestRoPE(t *testing.T) {
	// head_dim 4, theta 100: inv_freq = [1, 100^(-1/2)] = [1, 0.1]. Pairs
	// (x0, x2) and (x1, x3) rotate by pos·inv_freq as 2-D vectors.
	rot := func(a, b, ang float64) (float64, float64) {
		return a*math.Cos(ang) - b*math.Sin(ang), a*math.Sin(ang) + b*math.Cos(ang)
	}
	for _, pos := range []int{0, 1, 3, 17} {
		x := []float32{1, 2, 3, 4}
		rope(x, pos, 100)
		x0, x2 := rot(1, 3, float64(pos))
		x1, x3 := rot(2, 4, float64(float32(pos)*float32(0.1)))
		near(t, "rope", x, []float64{x0, x1, x2, x3}, 1e-6)
	}
}

func TestCausalGQA(t *testing.T) {
	s2 := math.Sqrt2
	t.Run("softmax weights", func(t *testing.T) {
		// Two query heads share one kv head (head_dim 2, scale 1/√2).
		// Position 1, head 0: scores (0, ln 3) -> weights (1/4, 3/4);
		// head 1 has q = 0 -> weights (1/2, 1/2).
		q := [][]float32{{1, 1, 1, 1}, {float32(s2 * math.Log(3)), 0, 0, 0}}
		k := [][]float32{{0, 0}, {1, 0}}
		v := [][]float32{{4, 0}, {0, 8}}
		out := causalGQA(q, k, v, 2, 1, 2)
		near(t, "pos0", out[0], []float64{4, 0, 4, 0}, 1e-6) // only itself visible
		near(t, "pos1", out[1], []float64{1, 6, 2, 4}, 1e-6)
	})
	t.Run("head grouping", func(t *testing.T) {
		// Four query heads, two kv heads: heads 0,1 use kv 0 and 2,3 use kv 1
		// (not h % 2). At position 0 each head returns its kv head's v.
		q := [][]float32{make([]float32, 4)}
		k := [][]float32{{5, 6}}
		v := [][]float32{{10, 20}}
		near(t, "pos0", causalGQA(q, k, v, 4, 2, 1)[0], []float64{10, 10, 20, 20}, 0)
	})
	t.Run("future is invisible", func(t *testing.T) {
		q := [][]float32{{1, 0}, {1, 0}}
		k := [][]float32{{1, 0}, {100, 0}}
		a := causalGQA(q, k, [][]float32{{1, 2}, {3, 4}}, 1, 1, 2)
		b := causalGQA(q, k, [][]float32{{1, 2}, {-30, 99}}, 1, 1, 2)
		near(t, "pos0", a[0], []float64{1, 2}, 0)
		near(t, "pos0 after changing v1", b[0], []float64{1, 2}, 0)
	})
}

func TestMLP(t *testing.T) {
	// gate = I, up = 2I, down = [[1, 1], [0, 1]]: h = silu(x) * 2x mixed by down.
	silu := func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	x := []float32{1, -1}
	a, b := silu(1)*2, silu(-1)*-2
	got := mlp([][]float32{x}, []float32{1, 0, 0, 1}, []float32{2, 0, 0, 2}, []float32{1, 1, 0, 1}, 2, 2, nil)
	near(t, "mlp", got[0], []float64{a + b, b}, 1e-6)
}

func TestLinear(t *testing.T) {
	// W [3 out, 2 in]; y = x·Wᵀ.
	got := linear([][]float32{{1, 2}, {3, 4}}, []float32{1, 0, 0, 1, 1, 1}, 3)
	near(t, "row0", got[0], []float64{1, 2, 3}, 0)
	near(t, "row1", got[1], []float64{3, 4, 7}, 0)
}

// TestConcurrentLinear: a product large enough to split across goroutines
// (the race tier runs it under -race) equals the one-goroutine dot products.
func TestConcurrentLinear(t *testing.T) {
	const in, out = 256, 512
	x := [][]float32{make([]float32, in), make([]float32, in)}
	w := make([]float32, out*in)
	for i := range w {
		w[i] = float32(i%13) - 6
	}
	for r := range x {
		for i := range x[r] {
			x[r][i] = float32((i+r)%7) / 7
		}
	}
	got := linear(x, w, out)
	for r := range x {
		want := make([]float64, out)
		for o := range out {
			want[o] = dot(x[r], w[o*in:(o+1)*in])
		}
		near(t, "row", got[r], want, 1e-4) // float32 rounding of a float64 sum
	}
}

// tinyConfig: 1 layer, hidden 4, head_dim 2, 2 query heads on 1 kv head.
func tinyConfig() arch.Config {
	return arch.Config{ModelType: "qwen3", HiddenSize: 4, NumHiddenLayers: 1, NumAttentionHeads: 2,
		NumKeyValueHeads: 1, HeadDim: 2, IntermediateSize: 3, RMSNormEps: 1e-6, RopeTheta: 10000,
		VocabSize: 5, TieWordEmbeddings: true}
}

func TestSingleToken(t *testing.T) {
	// With one token, attention is the identity on v (softmax over one key),
	// RoPE is the identity at position 0 and q/k drop out, so the whole pass
	// is computable here without the package's attention code.
	w, err := arch.Random(tinyConfig(), 3)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Config
	T := func(l int, n string) []float32 { return w.Tensors[arch.LayerTensor(l, n)].Data }
	norm := func(x []float64, g []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] / math.Sqrt(ss/float64(len(x))+c.RMSNormEps) * float64(g[i])
		}
		return out
	}
	mv := func(m []float32, x []float64) []float64 { // m [len(m)/len(x), len(x)]
		out := make([]float64, len(m)/len(x))
		for o := range out {
			for i := range x {
				out[o] += float64(m[o*len(x)+i]) * x[i]
			}
		}
		return out
	}
	const id = 2
	h := make([]float64, c.HiddenSize)
	for i := range h {
		h[i] = float64(w.Tensors[arch.EmbedTokens].Data[id*c.HiddenSize+i])
	}
	v := mv(T(0, arch.VProj), norm(h, T(0, arch.InputNorm))) // one kv head of 2
	attn := []float64{v[0], v[1], v[0], v[1]}                // both q heads read it
	for i, o := range mv(T(0, arch.OProj), attn) {
		h[i] += o
	}
	m := norm(h, T(0, arch.PostNorm))
	g, u := mv(T(0, arch.GateProj), m), mv(T(0, arch.UpProj), m)
	for i := range g {
		g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
	}
	for i, d := range mv(T(0, arch.DownProj), g) {
		h[i] += d
	}
	want := norm(h, w.Tensors[arch.FinalNorm].Data)

	got, err := FinalHidden(w, []int{id})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "FinalHidden", got, want, 1e-5)
	head, err := w.HeadDiff(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	logit, err := Logit(w, head, []int{id})
	if err != nil {
		t.Fatal(err)
	}
	var wantLogit float64
	for i := range want {
		wantLogit += want[i] * float64(head[i])
	}
	if math.Abs(float64(logit)-wantLogit) > 1e-5 {
		t.Errorf("Logit = %v, want %v", logit, wantLogit)
	}
}

func TestCausalPrefix(t *testing.T) {
	// The stream at position k must not depend on later tokens.
	w, err := arch.Random(tinyConfig(), 5)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{1, 4, 0, 3, 3, 2}
	full, err := forward(w, ids)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= len(ids); k++ {
		prefix, err := forward(w, ids[:k])
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range prefix[k-1] {
			if v != full[k-1][i] {
				t.Fatalf("position %d differs between prefix and full sequence", k-1)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	w, err := arch.Random(arch.Tiny(), 1)
	if err != nil {
		t.Fatal(err)
	}
	head, err := w.HeadDiff(9693, 2152)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{151644, 872, 198, 3838, 374, 264, 1273, 30, 151645, 198}
	a, err := Logit(w, head, ids)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if b, _ := Logit(w, head, ids); b != a {
			t.Fatalf("Logit not deterministic: %v then %v", a, b)
		}
	}
	if math.IsNaN(float64(a)) || math.IsInf(float64(a), 0) {
		t.Fatalf("Logit = %v", a)
	}
}

func TestErrors(t *testing.T) {
	w, err := arch.Random(tinyConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]float32, 4)
	for _, tc := range []struct {
		name string
		w    *arch.Weights
		head []float32
		ids  []int
		want string
	}{
		{"empty", w, head, nil, "empty"},
		{"too large", w, head, []int{1, 5}, "token 5 at position 1"},
		{"negative", w, head, []int{-1}, "token -1"},
		{"head size", w, head[:3], []int{1}, "head has 3"},
		{"nil weights", nil, head, []int{1}, "nil weights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Logit(tc.w, tc.head, tc.ids)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
