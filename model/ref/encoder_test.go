package ref

import (
	"math"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// The one-layer encoder below is small enough to derive by hand: hidden
// size 2, one head, an MLP of 3. For a 2-vector [a, b], LayerNorm has a
// closed form (mean (a+b)/2, deviations ±d with d = (a-b)/2, variance d²),
// which handEncoder uses instead of the reference's loops. layer_norm_eps
// is 0.5, not 1e-12: with two components and a tiny eps every LayerNorm
// output would be ±1 whatever came before it, and the test would check
// nothing but signs.
const handEps = 0.5

// handWeights returns the hand model's tensors; family selects XLM-R
// (positions from padding_idx + 1, one token type) or BERT (positions from
// 0, two token types). The classifier tensors are stored under both
// families' names; Check ignores the unused ones.
func handWeights(family string, embed bool) *arch.EncoderWeights {
	pad, types := 1, 1
	arc := arch.ArchXLMRSeqCls
	if family == arch.FamilyBERT {
		pad, types, arc = 0, 2, arch.ArchBertSeqCls
	}
	if embed {
		arc = map[string]string{arch.FamilyBERT: arch.ArchBertModel, arch.FamilyXLMR: arch.ArchXLMRModel}[family]
	}
	c := arch.EncoderConfig{
		Architectures: []string{arc}, ModelType: family,
		HiddenSize: 2, NumHiddenLayers: 1, NumAttentionHeads: 1, IntermediateSize: 3,
		HiddenAct: "gelu", LayerNormEps: handEps, VocabSize: 4, MaxPositionEmbeddings: 5,
		TypeVocabSize: types, PadTokenID: &pad, ID2Label: map[string]string{"0": "LABEL_0"},
	}
	t := func(shape []int, data ...float32) *arch.Tensor { return &arch.Tensor{Shape: shape, Data: data} }
	l := func(name string) string { return arch.EncoderLayerTensor(0, name) }
	typeRows := []float32{0.1, -0.1, -0.3, 0.2}[:2*types]
	w := map[string]*arch.Tensor{
		arch.EncWordEmbeddings:     t([]int{4, 2}, 1, 0, 0, 0, 0, 1, 2, 2),
		arch.EncPositionEmbeddings: t([]int{5, 2}, 0, 3, 3, 0, 0.5, 0, 0, 0.25, 0, 0),
		arch.EncTypeEmbeddings:     t([]int{types, 2}, typeRows...),
		arch.EncEmbedNormWeight:    t([]int{2}, 1, 2), arch.EncEmbedNormBias: t([]int{2}, 0, 0.5),
		l(arch.EncQuery): t([]int{2, 2}, 1, 0, 0, 1), l(arch.EncQueryBias): t([]int{2}, 0, 0),
		l(arch.EncKey): t([]int{2, 2}, 0, 1, 1, 0), l(arch.EncKeyBias): t([]int{2}, 0.2, 0),
		l(arch.EncValue): t([]int{2, 2}, 1, 1, 0, 1), l(arch.EncValueBias): t([]int{2}, 0, 0.1),
		l(arch.EncAttnOut): t([]int{2, 2}, 1, 0, 0, 1), l(arch.EncAttnOutB): t([]int{2}, 0.05, 0),
		l(arch.EncAttnNormW): t([]int{2}, 1, 1), l(arch.EncAttnNormB): t([]int{2}, 0, 0),
		l(arch.EncInter): t([]int{3, 2}, 1, 0, 0, 1, 1, -1), l(arch.EncInterBias): t([]int{3}, 0, 0, 0.5),
		l(arch.EncOut): t([]int{2, 3}, 1, 0, 1, 0, 1, 0), l(arch.EncOutBias): t([]int{2}, 0, 0),
		l(arch.EncOutNormW): t([]int{2}, 1, 0.5), l(arch.EncOutNormB): t([]int{2}, 0.1, -0.2),
	}
	// The heads: dense [[2,0],[0,1]] + [0, 0.1], tanh, then [[1, -1]] + 0.3.
	for _, n := range [][4]string{
		{arch.EncHeadDenseWeight, arch.EncHeadDenseBias, arch.EncHeadOutWeight, arch.EncHeadOutBias},
		{arch.EncPoolerWeight, arch.EncPoolerBias, arch.EncClassifierW, arch.EncClassifierBias},
	} {
		w[n[0]], w[n[1]] = t([]int{2, 2}, 2, 0, 0, 1), t([]int{2}, 0, 0.1)
		w[n[2]], w[n[3]] = t([]int{1, 2}, 1, -1), t([]int{1}, 0.3)
	}
	return &arch.EncoderWeights{Config: c, Tensors: w}
}

// handEncoder derives the hand model's final hidden states for the
// two-token input ids [0, 2] and its logit, in closed form.
func handEncoder(family string) (hidden [2][2]float64, logit float64) {
	ln2 := func(a, b float64, g, beta [2]float64) [2]float64 {
		d := (a - b) / 2
		n := d / math.Sqrt(d*d+handEps)
		return [2]float64{n*g[0] + beta[0], -n*g[1] + beta[1]}
	}
	// Embeddings: word rows 0 and 2 ([1, 0], [0, 1]) plus positions plus
	// types. XLM-R numbers the tokens 2 and 3 (padding_idx 1 + 1, + 2) and
	// has one type row [0.1, -0.1]; BERT numbers them 0 and 1, the second
	// token of type 1 ([-0.3, 0.2]).
	e := [2][2]float64{{1 + 0.5 + 0.1, 0 + 0 - 0.1}, {0 + 0 + 0.1, 1 + 0.25 - 0.1}}
	if family == arch.FamilyBERT {
		e = [2][2]float64{{1 + 0 + 0.1, 0 + 3 - 0.1}, {0 + 3 - 0.3, 1 + 0 + 0.2}}
	}
	var x [2][2]float64
	for i := range x {
		x[i] = ln2(e[i][0], e[i][1], [2]float64{1, 2}, [2]float64{0, 0.5})
	}
	// Attention: q = x, k = [x1 + 0.2, x0], v = [x0 + x1, x1 + 0.1],
	// scores q·k / sqrt(2), output projection identity + [0.05, 0].
	k := func(v [2]float64) [2]float64 { return [2]float64{v[1] + 0.2, v[0]} }
	val := func(v [2]float64) [2]float64 { return [2]float64{v[0] + v[1], v[1] + 0.1} }
	var h [2][2]float64
	for i := range x {
		s0 := (x[i][0]*k(x[0])[0] + x[i][1]*k(x[0])[1]) / math.Sqrt2
		s1 := (x[i][0]*k(x[1])[0] + x[i][1]*k(x[1])[1]) / math.Sqrt2
		p0 := 1 / (1 + math.Exp(s1-s0))
		p1 := 1 - p0
		a0 := p0*val(x[0])[0] + p1*val(x[1])[0] + 0.05
		a1 := p0*val(x[0])[1] + p1*val(x[1])[1]
		h[i] = ln2(x[i][0]+a0, x[i][1]+a1, [2]float64{1, 1}, [2]float64{0, 0})
	}
	// MLP: u = [h0, h1, h0 - h1 + 0.5], exact GELU, out [u0' + u2', u1'].
	gelu := func(v float64) float64 { return v * (1 + math.Erf(v/math.Sqrt2)) / 2 }
	for i := range h {
		g0, g1, g2 := gelu(h[i][0]), gelu(h[i][1]), gelu(h[i][0]-h[i][1]+0.5)
		hidden[i] = ln2(h[i][0]+g0+g2, h[i][1]+g1, [2]float64{1, 0.5}, [2]float64{0.1, -0.2})
	}
	// Head on the first token: tanh([2 o0, o1 + 0.1]) · [1, -1] + 0.3.
	o := hidden[0]
	return hidden, math.Tanh(2*o[0]) - math.Tanh(o[1]+0.1) + 0.3
}

func TestEncoderByHand(t *testing.T) {
	ids := []int{0, 2}
	for _, c := range []struct {
		family string
		types  []int
	}{{arch.FamilyXLMR, nil}, {arch.FamilyBERT, []int{0, 1}}} {
		t.Run(c.family, func(t *testing.T) {
			wantHidden, wantLogit := handEncoder(c.family)
			got, err := EncoderScoreLogit(handWeights(c.family, false), ids, c.types)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(got)-wantLogit) > 2e-6 {
				t.Errorf("logit %.7f, by hand %.7f", got, wantLogit)
			}
			hs, err := EncoderHidden(handWeights(c.family, true), ids, c.types)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wantHidden {
				for j := range wantHidden[i] {
					if math.Abs(float64(hs[i][j])-wantHidden[i][j]) > 2e-6 {
						t.Errorf("hidden[%d][%d] = %.7f, by hand %.7f", i, j, hs[i][j], wantHidden[i][j])
					}
				}
			}
			t.Logf("logit %.6f (by hand %.6f)", got, wantLogit)
		})
	}
}

// TestEncoderPoolingByHand pools the hand model's two hidden states.
func TestEncoderPoolingByHand(t *testing.T) {
	hs, _ := handEncoder(arch.FamilyXLMR)
	norm := func(v [2]float64) [2]float64 {
		n := math.Hypot(v[0], v[1])
		return [2]float64{v[0] / n, v[1] / n}
	}
	cases := []struct {
		p    arch.Pooling
		want [2]float64
	}{
		{arch.Pooling{Mode: arch.PoolCLS}, hs[0]},
		{arch.Pooling{Mode: arch.PoolCLS, Normalize: true}, norm(hs[0])},
		{arch.Pooling{Mode: arch.PoolMean}, [2]float64{(hs[0][0] + hs[1][0]) / 2, (hs[0][1] + hs[1][1]) / 2}},
		{arch.Pooling{Mode: arch.PoolMax, Normalize: true}, norm([2]float64{math.Max(hs[0][0], hs[1][0]), math.Max(hs[0][1], hs[1][1])})},
	}
	w := handWeights(arch.FamilyXLMR, true)
	for _, c := range cases {
		got, err := EncoderEmbedding(w, []int{0, 2}, nil, c.p)
		if err != nil {
			t.Fatal(err)
		}
		for j := range got {
			if math.Abs(float64(got[j])-c.want[j]) > 2e-6 {
				t.Errorf("%+v: [%d] = %.7f, by hand %.7f", c.p, j, got[j], c.want[j])
			}
		}
	}
}

// TestEncoderPositions: XLM-R's position ids start after padding_idx and
// give a padding token padding_idx; its usable length is
// max_position_embeddings - padding_idx - 1.
func TestEncoderPositions(t *testing.T) {
	c := handWeights(arch.FamilyXLMR, false).Config
	cases := []struct {
		ids     []int
		want    []int
		wantErr bool
	}{
		{[]int{0, 2, 3}, []int{2, 3, 4}, false},
		{[]int{0, 1, 3}, []int{2, 1, 3}, false},
		{[]int{0, 2, 3, 3}, nil, true}, // 4 > MaxTokens() = 5 - 1 - 1
	}
	for _, tc := range cases {
		got, err := encoderPositions(c, tc.ids)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: err %v", tc.ids, err)
			continue
		}
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("%v: positions %v, want %v", tc.ids, got, tc.want)
				break
			}
		}
	}
}
