package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
)

// Calibration holds what calibration text shows of a model's projection
// inputs, keyed as model/ref.ProjectionInputs names them (an RMSNorm's
// output by its gain's tensor name, o_proj's and down_proj's inputs by
// theirs): the largest |value| of every channel and a sample of rows.
// Add fills it from ProjectionInputs. QuantInt8Smooth needs the norms';
// ProjectionErrors uses all.
type Calibration struct {
	// ActMax is the per-channel max |x| of each input.
	ActMax map[string][]float32
	// Rows keeps up to maxCalibRows rows per input: the data the
	// smoothing strength (alpha) is chosen on and ProjectionErrors
	// measures.
	Rows map[string][][]float32
}

// maxCalibRows bounds the rows per norm kept for choosing alpha.
const maxCalibRows = 32

// SmoothAlphas are the smoothing strengths QuantInt8Smooth chooses from
// (SmoothQuant's alpha: 0 puts all of an activation channel's range into
// the weights' scale, 1 none of it); 0.5 is the paper's default.
var SmoothAlphas = []float64{0.25, 0.5, 0.75}

// smoothed maps a norm's suffix to the projections that read its output.
var smoothed = map[string][]string{
	arch.InputNorm: {arch.QProj, arch.KProj, arch.VProj},
	arch.PostNorm:  {arch.GateProj, arch.UpProj},
}

// Add records one sequence's rows of the input named norm.
func (c *Calibration) Add(norm string, rows [][]float32) {
	if c.ActMax == nil {
		c.ActMax, c.Rows = map[string][]float32{}, map[string][][]float32{}
	}
	for _, r := range rows {
		m := c.ActMax[norm]
		if m == nil {
			m = make([]float32, len(r))
			c.ActMax[norm] = m
		}
		for j, v := range r {
			m[j] = max(m[j], float32(math.Abs(float64(v))))
		}
		if len(c.Rows[norm]) < maxCalibRows {
			c.Rows[norm] = append(c.Rows[norm], slices.Clone(r))
		}
	}
}

// check reports every norm of w's layers that c lacks or has at another
// width.
func (c *Calibration) check(w *arch.Weights) error {
	if c == nil {
		return errors.New("no calibration (Options.Calibration)")
	}
	var errs []error
	for l := range w.Config.NumHiddenLayers {
		for norm := range smoothed {
			name := arch.LayerTensor(l, norm)
			if m := c.ActMax[name]; len(m) != w.Config.HiddenSize {
				errs = append(errs, fmt.Errorf("calibration of %s: %d channels, want %d", name, len(m), w.Config.HiddenSize))
			}
		}
	}
	return errors.Join(errs...)
}

// smoothFactors returns s_j = max|x_j|^alpha / max|W_:,j|^(1-alpha) over
// the projections reading the norm (SmoothQuant), for x' = x/s and
// W' = W·diag(s): the same product in real arithmetic, with an outlier
// channel's range moved from the activations (one scale per row) into
// the weights (one scale per output channel).
func smoothFactors(actMax []float32, ws [][]float32, alpha float64) []float32 {
	in := len(actMax)
	wmax := make([]float64, in)
	for _, w := range ws {
		for i, v := range w {
			wmax[i%in] = max(wmax[i%in], math.Abs(float64(v)))
		}
	}
	s := make([]float32, in)
	for j := range s {
		a, b := math.Max(float64(actMax[j]), 1e-5), math.Max(wmax[j], 1e-5)
		s[j] = float32(math.Pow(a, alpha) / math.Pow(b, 1-alpha))
	}
	return s
}

// smoothWeights returns w with every layer's q/k/v and gate/up inputs
// smoothed at alpha: the norm gain divided by s, the projections' columns
// multiplied by it. Only the changed tensors are new memory; the returned
// set names them (their initializers must not share the float32 graphs'
// names).
func smoothWeights(w *arch.Weights, c *Calibration, alpha float64) (*arch.Weights, map[string]bool) {
	out := &arch.Weights{Config: w.Config, Tensors: make(map[string]*arch.Tensor, len(w.Tensors))}
	for k, v := range w.Tensors {
		out.Tensors[k] = v
	}
	changed := map[string]bool{}
	for l := range w.Config.NumHiddenLayers {
		for norm, projs := range smoothed {
			name := arch.LayerTensor(l, norm)
			ws := make([][]float32, len(projs))
			for i, p := range projs {
				ws[i] = w.Tensors[arch.LayerTensor(l, p)].Data
			}
			s := smoothFactors(c.ActMax[name], ws, alpha)
			g := w.Tensors[name]
			ng := &arch.Tensor{Shape: g.Shape, Data: make([]float32, len(g.Data))}
			for j, v := range g.Data {
				ng.Data[j] = v / s[j]
			}
			out.Tensors[name], changed[name] = ng, true
			for i, p := range projs {
				pn := arch.LayerTensor(l, p)
				nw := &arch.Tensor{Shape: w.Tensors[pn].Shape, Data: make([]float32, len(ws[i]))}
				in := len(s)
				for k, v := range ws[i] {
					nw.Data[k] = v * s[k%in]
				}
				out.Tensors[pn], changed[pn] = nw, true
			}
		}
	}
	return out, changed
}

// SmoothError is the alpha search's measure: the relative RMS error of
// the smoothed, int8-quantised products (per-row activations,
// per-channel weights) against the float32 products, over the
// calibration rows and a stride of output channels of every smoothed
// projection. alpha < 0 measures no smoothing.
func SmoothError(w *arch.Weights, c *Calibration, alpha float64) float64 {
	sw := w
	if alpha >= 0 {
		sw, _ = smoothWeights(w, c, alpha)
	}
	var se, ref float64
	for l := range w.Config.NumHiddenLayers {
		for norm, projs := range smoothed {
			name := arch.LayerTensor(l, norm)
			rows := c.Rows[name]
			g, sg := w.Tensors[name].Data, sw.Tensors[name].Data
			for _, p := range projs {
				pn := arch.LayerTensor(l, p)
				t, st := w.Tensors[pn], sw.Tensors[pn]
				out, in := t.Shape[0], t.Shape[1]
				stride := max(1, out/256)
				qw, scales := quantizeInt8(st.Data, out, in)
				for _, x := range rows {
					// Rows are the float32 norm's output: x·g'/g is the
					// smoothed graph's.
					xs := make([]float32, in)
					for j := range xs {
						if g[j] != 0 {
							xs[j] = x[j] * sg[j] / g[j]
						}
					}
					xscale := float64(absMax(xs)) / 127
					xq := make([]float64, in)
					for j, v := range xs {
						if xscale > 0 {
							xq[j] = clampRound(float32(float64(v)/xscale), -127, 127)
						}
					}
					for o := 0; o < out; o += stride {
						var exact, q float64
						for j := range in {
							exact += float64(x[j]) * float64(t.Data[o*in+j])
							q += xq[j] * float64(int8(qw[j*out+o]))
						}
						q *= xscale * float64(scales[o])
						se += (q - exact) * (q - exact)
						ref += exact * exact
					}
				}
			}
		}
	}
	if ref == 0 {
		return 0
	}
	return math.Sqrt(se / ref)
}

// ChooseSmoothAlpha returns the SmoothAlphas value with the lowest
// SmoothError on c, or -1 (no smoothing) when none beats it, with the
// error of each candidate (no smoothing first) for the record.
func ChooseSmoothAlpha(w *arch.Weights, c *Calibration) (float64, []float64) {
	best, bestErr := -1.0, SmoothError(w, c, -1)
	errs := []float64{bestErr}
	for _, a := range SmoothAlphas {
		e := SmoothError(w, c, a)
		errs = append(errs, e)
		if e < bestErr {
			best, bestErr = a, e
		}
	}
	return best, errs
}

// smoothName is the initializer name of a tensor smoothWeights changed.
func smoothName(name string) string {
	return strings.TrimSuffix(name, ".weight") + ".smooth.weight"
}

// ProjectionError is one projection's int8 error on calibration rows.
type ProjectionError struct {
	Tensor string  `json:"tensor"`
	Layer  int     `json:"layer"`
	Kind   string  `json:"kind"` // arch suffix without ".weight": "self_attn.q_proj", ...
	RelErr float64 `json:"relative_rms_error"`
}

// ProjectionErrors measures, for every projection of w, the relative RMS
// error of q's product (QuantInt8: per-row activations, per-channel
// weights; QuantInt8Block32: both per block of 32) against float32 on
// the calibration rows of its input (a stride of at most 256 output
// channels). It says which projections' quantisation is worst, the
// evidence QuantInt8Mixed's float32 choice rests on; it does not weigh
// how far each error travels to the logit.
func ProjectionErrors(w *arch.Weights, c *Calibration, q Quant) ([]ProjectionError, error) {
	inputs := map[string]string{arch.QProj: arch.InputNorm, arch.KProj: arch.InputNorm, arch.VProj: arch.InputNorm,
		arch.GateProj: arch.PostNorm, arch.UpProj: arch.PostNorm, arch.OProj: arch.OProj, arch.DownProj: arch.DownProj}
	kinds := []string{arch.QProj, arch.KProj, arch.VProj, arch.OProj, arch.GateProj, arch.UpProj, arch.DownProj}
	var out []ProjectionError
	for l := range w.Config.NumHiddenLayers {
		for _, k := range kinds {
			name := arch.LayerTensor(l, k)
			rows := c.Rows[arch.LayerTensor(l, inputs[k])]
			t := w.Tensors[name]
			if t == nil || len(rows) == 0 {
				return nil, fmt.Errorf("projection errors: no tensor or no calibration rows for %s", name)
			}
			e, err := productError(t, rows, q)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, ProjectionError{Tensor: name, Layer: l, Kind: strings.TrimSuffix(k, ".weight"), RelErr: e})
		}
	}
	return out, nil
}

// productError is the relative RMS error of x·Wᵀ computed as q would.
func productError(t *arch.Tensor, rows [][]float32, q Quant) (float64, error) {
	out, in := t.Shape[0], t.Shape[1]
	bs := in
	switch q {
	case QuantInt8:
	case QuantInt8Block32:
		bs = quantBlock
	default:
		return 0, fmt.Errorf("product error of %v not modelled", q)
	}
	if in%bs != 0 {
		return 0, fmt.Errorf("width %d is not a multiple of %d", in, bs)
	}
	stride := max(1, out/256)
	// Weights per output channel and block, quantised once.
	wq := make([]float64, 0, (out/stride+1)*in)
	var idx []int
	for o := 0; o < out; o += stride {
		idx = append(idx, o)
		for b := 0; b < in; b += bs {
			blk := t.Data[o*in+b : o*in+b+bs]
			sc := float64(absMax(blk)) / 127
			for _, v := range blk {
				if sc > 0 {
					wq = append(wq, clampRound(float32(float64(v)/sc), -127, 127)*sc)
				} else {
					wq = append(wq, 0)
				}
			}
		}
	}
	var se, ref float64
	xq := make([]float64, in)
	for _, x := range rows {
		for b := 0; b < in; b += bs {
			sc := float64(absMax(x[b:b+bs])) / 127
			for j := b; j < b+bs; j++ {
				xq[j] = 0
				if sc > 0 {
					xq[j] = clampRound(float32(float64(x[j])/sc), -127, 127) * sc
				}
			}
		}
		for i, o := range idx {
			var exact, got float64
			wr := wq[i*in : (i+1)*in]
			for j := range in {
				exact += float64(x[j]) * float64(t.Data[o*in+j])
				got += xq[j] * wr[j]
			}
			se += (got - exact) * (got - exact)
			ref += exact * exact
		}
	}
	if ref == 0 {
		return 0, nil
	}
	return math.Sqrt(se / ref), nil
}
