package ref

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/rerankd/rerankd/model/arch"
)

// Logit returns dot(final hidden state at the last token of ids, head),
// where head is normally w.HeadDiff(yes, no); the reranker's score is
// sigmoid(Logit).
func Logit(w *arch.Weights, head []float32, ids []int) (float32, error) {
	if w != nil && len(head) != w.Config.HiddenSize {
		return 0, fmt.Errorf("ref: head has %d values, want hidden size %d", len(head), w.Config.HiddenSize)
	}
	h, err := FinalHidden(w, ids)
	if err != nil {
		return 0, err
	}
	var s float64
	for i, v := range h {
		s += float64(v) * float64(head[i])
	}
	return float32(s), nil
}

// FinalHidden returns the final-normed hidden state at the last token of
// ids (one unpadded sequence). Multiplying it by any head row gives that
// token's logit, so full-vocabulary outputs can be checked too.
func FinalHidden(w *arch.Weights, ids []int) ([]float32, error) {
	hs, err := forward(w, ids)
	if err != nil {
		return nil, err
	}
	return rmsNorm(hs[len(hs)-1], w.Tensors[arch.FinalNorm].Data, w.Config.RMSNormEps), nil
}

// ProjectionInputs runs ids through the model and calls visit with the
// rows every projection reads, one per position, keyed by where they come
// from: each layer's two RMSNorm outputs by the gain's tensor name
// (arch.LayerTensor(l, arch.InputNorm) for q/k/v, arch.PostNorm for
// gate/up), the attention output by o_proj's and the MLP's SiLU(gate)·up
// by down_proj's. visit must not keep rows past its return. Quantisation
// calibration (activation ranges per channel) is its use.
func ProjectionInputs(w *arch.Weights, ids []int, visit func(input string, rows [][]float32)) error {
	_, err := forwardVisit(w, ids, visit)
	return err
}

// forward returns the residual stream after the last layer (before the
// final norm) at every position.
func forward(w *arch.Weights, ids []int) ([][]float32, error) { return forwardVisit(w, ids, nil) }

func forwardVisit(w *arch.Weights, ids []int, visit func(norm string, rows [][]float32)) ([][]float32, error) {
	if w == nil {
		return nil, errors.New("ref: nil weights")
	}
	// The head is the caller's (Logit takes it folded): an untied lm_head
	// need not be present to compute hidden states.
	if err := w.CheckBackbone(); err != nil {
		return nil, fmt.Errorf("ref: %w", err)
	}
	c := w.Config
	if len(ids) == 0 {
		return nil, errors.New("ref: empty sequence")
	}
	embed := w.Tensors[arch.EmbedTokens]
	h := make([][]float32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= c.VocabSize {
			return nil, fmt.Errorf("ref: token %d at position %d outside vocabulary of %d", id, i, c.VocabSize)
		}
		h[i] = append([]float32(nil), embed.Data[id*c.HiddenSize:(id+1)*c.HiddenSize]...)
	}
	for l := range c.NumHiddenLayers {
		t := func(name string) []float32 { return w.Tensors[arch.LayerTensor(l, name)].Data }
		a := normRows(h, t(arch.InputNorm), c.RMSNormEps)
		if visit != nil {
			visit(arch.LayerTensor(l, arch.InputNorm), a)
		}
		att := attention(c, a, t)
		if visit != nil {
			visit(arch.LayerTensor(l, arch.OProj), att)
		}
		o := linear(att, t(arch.OProj), c.HiddenSize)
		addRows(h, o)
		m := normRows(h, t(arch.PostNorm), c.RMSNormEps)
		if visit != nil {
			visit(arch.LayerTensor(l, arch.PostNorm), m)
		}
		var seen func([][]float32)
		if visit != nil {
			seen = func(rows [][]float32) { visit(arch.LayerTensor(l, arch.DownProj), rows) }
		}
		addRows(h, mlp(m, t(arch.GateProj), t(arch.UpProj), t(arch.DownProj), c.IntermediateSize, c.HiddenSize, seen))
	}
	return h, nil
}

// attention runs causal grouped-query self-attention on the normed stream
// a and returns the concatenated head outputs [seq][heads*head_dim].
func attention(c arch.Config, a [][]float32, t func(string) []float32) [][]float32 {
	nh, nkv, hd := c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim
	q := linear(a, t(arch.QProj), nh*hd)
	k := linear(a, t(arch.KProj), nkv*hd)
	v := linear(a, t(arch.VProj), nkv*hd)
	if c.QKVBias() { // Qwen2: q/k/v biases, added before RoPE
		addBias(q, t(arch.QBias))
		addBias(k, t(arch.KBias))
		addBias(v, t(arch.VBias))
	}
	// Qwen3 normalises each head (q_norm/k_norm) before rotating it; Qwen2
	// rotates the projection as it is.
	headNorm := func(x []float32, gain string) []float32 {
		if !c.QKNorm() {
			return x
		}
		return copyTo(x, rmsNorm(x, t(gain), c.RMSNormEps))
	}
	for p := range a {
		for h := range nh {
			rope(headNorm(q[p][h*hd:(h+1)*hd], arch.QNorm), p, c.RopeTheta)
		}
		for h := range nkv {
			rope(headNorm(k[p][h*hd:(h+1)*hd], arch.KNorm), p, c.RopeTheta)
		}
	}
	return causalGQA(q, k, v, nh, nkv, hd)
}

// addBias adds b to every row of x.
func addBias(x [][]float32, b []float32) {
	for _, r := range x {
		for i := range r {
			r[i] += b[i]
		}
	}
}

// causalGQA: query head h attends with kv head h/(nh/nkv) over positions
// j <= i, scores scaled by 1/sqrt(hd).
func causalGQA(q, k, v [][]float32, nh, nkv, hd int) [][]float32 {
	group := nh / nkv
	scale := 1 / math.Sqrt(float64(hd))
	out := make([][]float32, len(q))
	for i := range q {
		out[i] = make([]float32, nh*hd)
		scores := make([]float64, i+1)
		for h := range nh {
			kvh := h / group
			qi := q[i][h*hd : (h+1)*hd]
			maxS := math.Inf(-1)
			for j := 0; j <= i; j++ {
				scores[j] = dot(qi, k[j][kvh*hd:(kvh+1)*hd]) * scale
				maxS = math.Max(maxS, scores[j])
			}
			var sum float64
			for j := range scores {
				scores[j] = math.Exp(scores[j] - maxS)
				sum += scores[j]
			}
			for d := range hd {
				var acc float64
				for j := range scores {
					acc += scores[j] * float64(v[j][kvh*hd+d])
				}
				out[i][h*hd+d] = float32(acc / sum)
			}
		}
	}
	return out
}

// mlp is SwiGLU: down(silu(gate(x)) * up(x)).
func mlp(x [][]float32, gate, up, down []float32, inter, hidden int, seen func([][]float32)) [][]float32 {
	g, u := linear(x, gate, inter), linear(x, up, inter)
	for p := range g {
		for i, gv := range g[p] {
			s := float64(gv)
			g[p][i] = float32(s / (1 + math.Exp(-s)) * float64(u[p][i]))
		}
	}
	if seen != nil {
		seen(g)
	}
	return linear(g, down, hidden)
}

// rmsNorm returns x / sqrt(mean(x²) + eps) * weight.
func rmsNorm(x, weight []float32, eps float64) []float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(float64(v) * inv * float64(weight[i]))
	}
	return out
}

// rope rotates x (one head at position pos) in place, rotate-half style:
// x' = x*cos + rotate_half(x)*sin, rotate_half([x1, x2]) = [-x2, x1], with
// angle pos*theta^(-2i/dim) rounded to float32 as Hugging Face computes it.
func rope(x []float32, pos int, theta float64) {
	half := len(x) / 2
	for i := range half {
		inv := float32(math.Pow(theta, -float64(2*i)/float64(len(x))))
		ang := float64(float32(pos) * inv)
		cos, sin := math.Cos(ang), math.Sin(ang)
		x1, x2 := float64(x[i]), float64(x[i+half])
		x[i] = float32(x1*cos - x2*sin)
		x[i+half] = float32(x2*cos + x1*sin)
	}
}

func normRows(x [][]float32, weight []float32, eps float64) [][]float32 {
	out := make([][]float32, len(x))
	for i, r := range x {
		out[i] = rmsNorm(r, weight, eps)
	}
	return out
}

// linear returns x·Wᵀ for W [out, in] (Hugging Face layout), splitting the
// output columns across goroutines.
func linear(x [][]float32, w []float32, out int) [][]float32 {
	in := len(w) / out
	y := make([][]float32, len(x))
	for i := range y {
		y[i] = make([]float32, out)
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, out*len(x)*in/(1<<16)))
	var wg sync.WaitGroup
	for part := range workers {
		lo, hi := part*out/workers, (part+1)*out/workers
		wg.Go(func() {
			for o := lo; o < hi; o++ {
				row := w[o*in : (o+1)*in]
				for i, xi := range x {
					y[i][o] = float32(dot(xi, row))
				}
			}
		})
	}
	wg.Wait()
	return y
}

func dot(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

func addRows(h, d [][]float32) {
	for i := range h {
		for j := range h[i] {
			h[i][j] += d[i][j]
		}
	}
}

func copyTo(dst, src []float32) []float32 { copy(dst, src); return dst }
