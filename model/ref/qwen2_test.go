package ref

import (
	"math"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// tinyQwen2 is tinyConfig as a Qwen2 decoder: q/k/v biases, no q/k norms.
func tinyQwen2() arch.Config {
	c := tinyConfig()
	c.ModelType = arch.FamilyQwen2
	return c
}

// TestQwen2SingleToken: with one token attention returns v, biases
// included (q, k and their biases drop out), so the whole Qwen2 pass is
// computable by hand here: embed, norm, v = W_v·x + b_v, o_proj, MLP.
func TestQwen2SingleToken(t *testing.T) {
	w, err := arch.Random(tinyQwen2(), 4)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Config
	if _, ok := w.Tensors[arch.LayerTensor(0, arch.QNorm)]; ok {
		t.Fatal("Qwen2 weights have a q_norm")
	}
	T := func(n string) []float32 { return w.Tensors[arch.LayerTensor(0, n)].Data }
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
	mv := func(m []float32, x []float64) []float64 {
		out := make([]float64, len(m)/len(x))
		for o := range out {
			for i := range x {
				out[o] += float64(m[o*len(x)+i]) * x[i]
			}
		}
		return out
	}
	const id = 3
	h := make([]float64, c.HiddenSize)
	for i := range h {
		h[i] = float64(w.Tensors[arch.EmbedTokens].Data[id*c.HiddenSize+i])
	}
	v := mv(T(arch.VProj), norm(h, T(arch.InputNorm)))
	for i, b := range T(arch.VBias) {
		v[i] += float64(b)
	}
	for i, o := range mv(T(arch.OProj), []float64{v[0], v[1], v[0], v[1]}) {
		h[i] += o
	}
	m := norm(h, T(arch.PostNorm))
	g, u := mv(T(arch.GateProj), m), mv(T(arch.UpProj), m)
	for i := range g {
		g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
	}
	for i, d := range mv(T(arch.DownProj), g) {
		h[i] += d
	}
	got, err := FinalHidden(w, []int{id})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "FinalHidden", got, norm(h, w.Tensors[arch.FinalNorm].Data), 1e-5)
}

// TestQwen2Attention: what distinguishes Qwen2's attention from Qwen3's,
// each against an independent form over three positions.
func TestQwen2Attention(t *testing.T) {
	w, err := arch.Random(tinyQwen2(), 9)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Config
	a := [][]float32{{0.3, -1, 0.5, 2}, {1, 0.2, -0.7, 0.1}, {-0.4, 0.9, 1.5, -1.2}}
	layer := func(w *arch.Weights) func(string) []float32 {
		return func(n string) []float32 { return w.Tensors[arch.LayerTensor(0, n)].Data }
	}
	base := attention(c, a, layer(w))
	for _, tc := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"biases equal a constant input column", func(t *testing.T) {
			// x·Wᵀ + b is [x, 1]·[W | b]ᵀ: the same attention from a
			// bias-free projection over one more input dimension.
			aug := c
			aug.HiddenSize++
			ww := map[string][]float32{}
			for _, p := range []string{arch.QProj, arch.KProj, arch.VProj} {
				W, b := layer(w)(p), layer(w)(arch.ProjBias(p))
				var m []float32
				for o := range b {
					m = append(append(m, W[o*c.HiddenSize:(o+1)*c.HiddenSize]...), b[o])
				}
				ww[p] = m
				ww[arch.ProjBias(p)] = make([]float32, len(b))
			}
			var ax [][]float32
			for _, r := range a {
				ax = append(ax, append(append([]float32(nil), r...), 1))
			}
			near(t, "augmented", flat(attention(aug, ax, func(n string) []float32 { return ww[n] })), f64(flat(base)), 1e-5)
		}},
		{"no q_norm: a q_proj scale shows", func(t *testing.T) {
			// Without biases and norms, scaling q by s scales every score
			// by s: the output must move (no q_norm to undo it) ...
			t2 := func(n string) []float32 {
				if n == arch.QBias || n == arch.KBias || n == arch.VBias {
					return make([]float32, len(layer(w)(n)))
				}
				if n == arch.QProj {
					q := append([]float32(nil), layer(w)(n)...)
					for i := range q {
						q[i] *= 3
					}
					return q
				}
				return layer(w)(n)
			}
			t1 := func(n string) []float32 {
				if n == arch.QBias || n == arch.KBias || n == arch.VBias {
					return make([]float32, len(layer(w)(n)))
				}
				return layer(w)(n)
			}
			x, y := flat(attention(c, a, t1)), flat(attention(c, a, t2))
			if maxDiff(x, y) < 1e-3 {
				t.Errorf("scaling q_proj by 3 moved Qwen2 attention by only %g: a q_norm is applied", maxDiff(x, y))
			}
			// ... while Qwen3's q_norm makes the same scaling invisible.
			q3 := c
			q3.ModelType = arch.FamilyQwen3
			w3, err := arch.Random(q3, 9)
			if err != nil {
				t.Fatal(err)
			}
			s3 := func(n string) []float32 {
				if n == arch.QProj {
					q := append([]float32(nil), layer(w3)(n)...)
					for i := range q {
						q[i] *= 3
					}
					return q
				}
				return layer(w3)(n)
			}
			x3, y3 := flat(attention(q3, a, layer(w3))), flat(attention(q3, a, s3))
			if d := maxDiff(x3, y3); d > 1e-4 {
				t.Errorf("Qwen3 attention moved by %g under a q_proj scale its q_norm removes", d)
			}
		}},
	} {
		t.Run(tc.name, tc.check)
	}
}

func flat(x [][]float32) []float32 {
	var out []float32
	for _, r := range x {
		out = append(out, r...)
	}
	return out
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func maxDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}
