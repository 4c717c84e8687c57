package onnx

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Quant selects how a graph stores and multiplies its projection weights
// (the q/k/v/o and MLP matrices: ~95% of a reranker's FLOPs). Norms, the
// embedding table and the score head stay float32.
type Quant int

const (
	// QuantNone keeps float32 weights and Gemm: the reference.
	QuantNone Quant = iota
	// QuantInt8 stores weights as int8 with one symmetric scale per output
	// channel and quantises activations per row (symmetric, absmax/127) at
	// run time; the product runs as ORT's uint8 x int8 MatMulInteger (VNNI
	// where the CPU has it). Per row, not per tensor (ORT's
	// DynamicQuantizeMatMul, ~10% faster here), because a per-tensor scale
	// would make one document's score depend on the others in its batch.
	QuantInt8
	// QuantInt8Block32 stores weights as int8 in blocks of 32 along the
	// input dimension, each block with its own scale (llama.cpp's q8_0
	// layout), and multiplies with ORT's MatMulNBits (bits 8,
	// accuracy_level 4), which quantises activations per row and block of
	// 32 too: one scale per 32 values on both sides instead of one per
	// row. A contrib kernel (com.microsoft, ORT >= 1.22 on x86).
	QuantInt8Block32
	// QuantInt8Group128 is QuantInt8 with the input dimension split into
	// groups of 128 (the whole dimension when it is not a multiple of
	// 128): weights get a scale per output channel and group, activations
	// per row and group, and one batched MatMulInteger computes every
	// group's integer product, summed in float32 after scaling. Standard
	// ONNX ops only.
	QuantInt8Group128
	// QuantInt8Mixed is QuantInt8 with the MLP's down projection kept in
	// float32: its input (SiLU(gate)·up, 3x the hidden width) has the
	// widest per-row range, and its product error is the largest of the
	// projections (ProjectionErrors; 2.2x the others on the full-size test
	// model, though keeping it in float32 cut the logit error little:
	// docs/perf/int8-precision.md).
	QuantInt8Mixed
	// QuantInt8Smooth is QuantInt8 after SmoothQuant-style smoothing: each
	// channel of the q/k/v and gate/up inputs is divided by a factor
	// folded into the preceding RMSNorm gain, the weights' input columns
	// multiplied by it (the same function in real arithmetic), so that an
	// activation channel with outliers no longer sets its row's scale.
	// The factors come from calibration text (Options.Calibration) and
	// the strength from ChooseSmoothAlpha (Options.SmoothAlpha). o_proj
	// and down_proj are QuantInt8's.
	QuantInt8Smooth
	// QuantInt8SmoothBlock32 is QuantInt8Block32 on QuantInt8Smooth's
	// smoothed weights (the same calibration and alpha).
	QuantInt8SmoothBlock32
)

var quantNames = [...]string{"fp32", "int8", "int8-block32", "int8-group128", "int8-mixed", "int8-smooth", "int8-smooth-block32"}

// quantGroup is QuantInt8Group128's group size along the input dimension.
const quantGroup = 128

// quantBlock is QuantInt8Block32's block size (MatMulNBits' block_size).
const quantBlock = 32

// blockSize is q's MatMulNBits block size, or 0 for the other kinds.
// (Blocks of 16 were tried: on the tiny model they moved scores more than
// blocks of 32 and a row's logit by 1.7e-3 between batch layouts, so the
// kernel at that size was not pursued.)
func (q Quant) blockSize() int {
	if q == QuantInt8Block32 || q == QuantInt8SmoothBlock32 {
		return quantBlock
	}
	return 0
}

// smooths reports whether q's graphs are built on smoothed weights.
func (q Quant) smooths() bool { return q == QuantInt8Smooth || q == QuantInt8SmoothBlock32 }

// String returns the name used in metadata, flags and file names.
func (q Quant) String() string {
	if q < 0 || int(q) >= len(quantNames) {
		return fmt.Sprintf("Quant(%d)", int(q))
	}
	return quantNames[q]
}

// Valid reports whether q is one of the kinds this package builds.
func (q Quant) Valid() bool { return q >= QuantNone && int(q) < len(quantNames) }

// ParseQuant is the inverse of Quant.String.
func ParseQuant(s string) (Quant, error) {
	for i, n := range quantNames {
		if n == s {
			return Quant(i), nil
		}
	}
	return 0, fmt.Errorf("unknown weight quantisation %q (want one of %v)", s, quantNames)
}

// forTensor is the kind the projection named tensor is stored as in a
// graph of kind q: QuantNone for the projections QuantInt8Mixed keeps in
// float32, QuantInt8 for its others, q itself otherwise.
func (q Quant) forTensor(tensor string) Quant {
	switch q {
	case QuantInt8Mixed:
		if strings.HasSuffix(tensor, arch.DownProj) {
			return QuantNone
		}
		return QuantInt8
	case QuantInt8Smooth, QuantInt8SmoothBlock32:
		// Smoothing changes only the projections after a norm: the others
		// are the unsmoothed variant's, stored once for both.
		if strings.HasSuffix(tensor, arch.OProj) || strings.HasSuffix(tensor, arch.DownProj) {
			if q == QuantInt8Smooth {
				return QuantInt8
			}
			return QuantInt8Block32
		}
	}
	return q
}

// MetaQuant records a quantised graph's Quant.String(); absent means float32.
const MetaQuant = "rerankd.quant"

// MetaSmoothAlpha records QuantInt8Smooth's alpha ("none": the
// calibration found no alpha better than no smoothing).
const MetaSmoothAlpha = "rerankd.smooth_alpha"

// prepareWeights applies opts' weight transforms before a graph is built:
// QuantInt8Smooth's smoothing, returning the tensors it changed (their
// initializers get their own names: the float32 graphs keep theirs).
func prepareWeights(w *arch.Weights, opts Options) (*arch.Weights, map[string]bool, error) {
	if !opts.Quant.smooths() {
		return w, nil, nil
	}
	if err := opts.Calibration.check(w); err != nil {
		return nil, nil, err
	}
	if opts.SmoothAlpha < 0 {
		return w, nil, nil
	}
	sw, changed := smoothWeights(w, opts.Calibration, opts.SmoothAlpha)
	return sw, changed, nil
}

// setQuantMeta records opts' quantisation in m's metadata.
func setQuantMeta(m *Model, opts Options) {
	if opts.Quant == QuantNone {
		return
	}
	m.setMeta(MetaQuant, opts.Quant.String())
	if opts.Quant.smooths() {
		a := "none"
		if opts.SmoothAlpha >= 0 {
			a = strconv.FormatFloat(opts.SmoothAlpha, 'g', -1, 64)
		}
		m.setMeta(MetaSmoothAlpha, a)
	}
}

// quantLinear computes x·Wᵀ for x [rows, in] and W [out, in] (float32,
// Hugging Face layout) with weights stored per q. name is the weight's
// tensor name; the quantised initializers derive theirs from it.
// A weight used twice (the shared-prefix graph runs some layers over two
// streams) is quantised and stored once.
func (g *graph) quantLinear(x, name string, shape []int, w []float32, q Quant) string {
	out, in := shape[0], shape[1]
	b, s := name+"."+q.String(), name+"."+q.String()+"_scale"
	_, done := g.consts["q:"+b]
	g.consts["q:"+b] = b
	switch q {
	case QuantInt8, QuantInt8Smooth:
		if !done {
			qw, scales := quantizeInt8(w, out, in)
			g.rawInit(b, onnxpb.TensorProto_INT8, []int{in, out}, qw)
			g.floatInit(s, []int{out}, scales)
		}
		xq, rs := g.quantizeRows(x)
		y := g.op("MatMulInteger", []string{xq, b, g.zp128()})
		yf := g.op("DequantizeLinear", []string{y, rs}, attrInt("axis", 0))
		return g.op("Mul", []string{yf, s})
	case QuantInt8Block32, QuantInt8SmoothBlock32:
		bs := q.blockSize()
		if in%bs != 0 {
			// MatMulNBits pads a short last block itself, but every
			// projection of the supported architectures is a multiple of
			// 32 wide: refuse rather than test a path nobody runs.
			panic(fmt.Sprintf("onnx: %v: input width %d is not a multiple of %d", q, in, bs))
		}
		if !done {
			codes, scales := quantizeBlocks(w, out, in, bs)
			g.rawInit(b, onnxpb.TensorProto_UINT8, []int{out, in / bs, bs}, codes)
			g.floatInit(s, []int{out * (in / bs)}, scales)
		}
		// No zero_points input: 8-bit codes default to zero point 128,
		// i.e. symmetric int8 stored as q+128.
		return g.msOp("MatMulNBits", 1, []int{0}, []string{x, b, s},
			attrInt("K", int64(in)), attrInt("N", int64(out)), attrInt("bits", 8),
			attrInt("block_size", int64(bs)), attrInt("accuracy_level", 4))[0]
	case QuantInt8Group128:
		gs := groupSize(in)
		groups := in / gs
		if !done {
			qw, scales := quantizeGroups(w, out, in, gs)
			g.rawInit(b, onnxpb.TensorProto_INT8, []int{groups, gs, out}, qw)
			g.floatInit(s, []int{groups, 1, out}, scales)
		}
		xq, rs := g.quantizeGroups(x, groups, gs)
		// [groups, rows, out] int32: each group's integer dot products.
		y := g.op("MatMulInteger", []string{xq, b, g.zp128()})
		yf := g.op("Mul", []string{g.op("Cast", []string{y}, attrInt("to", int64(onnxpb.TensorProto_FLOAT))), rs})
		yf = g.op("Mul", []string{yf, s})
		return g.op("ReduceSum", []string{yf, g.ints(0)}, attrInt("keepdims", 0))
	default:
		panic(fmt.Sprintf("onnx: quantLinear with %v", q))
	}
}

// groupSize is QuantInt8Group128's group width for an input dimension.
func groupSize(in int) int {
	if in%quantGroup == 0 {
		return quantGroup
	}
	return in
}

// quantizeGroups returns x [rows, groups·gs] quantised per row and group
// as uint8 q+128 transposed to [groups, rows, gs] (MatMulInteger's batch
// axis first), and the scales [groups, rows, 1] (absmax/127 of each row's
// group). Shared by the projections that read the same x.
func (g *graph) quantizeGroups(x string, groups, gs int) (xq, scale string) {
	key := fmt.Sprintf("%s/g%d", x, gs)
	if q, ok := g.consts["gq:"+key]; ok {
		return q, g.consts["gs:"+key]
	}
	xr := g.op("Reshape", []string{x, g.ints(0, int64(groups), int64(gs))})
	amax := g.op("ReduceMax", []string{g.op("Abs", []string{xr}), g.ints(-1)}, attrInt("keepdims", 1))
	sc := g.op("Div", []string{g.op("Max", []string{amax, g.scalarFloat(1e-30)}), g.scalarFloat(127)})
	// x/scale is within [-127, 127]; QuantizeLinear with scale 1 rounds
	// half to even, adds the zero point and saturates, as the per-row path.
	q := g.op("QuantizeLinear", []string{g.op("Div", []string{xr, sc}), g.scalarFloat(1), g.zp128()})
	perm := attrInts("perm", 1, 0, 2)
	xq = g.op("Transpose", []string{q}, perm)
	scale = g.op("Transpose", []string{sc}, perm)
	g.consts["gq:"+key], g.consts["gs:"+key] = xq, scale
	return xq, scale
}

// quantizeGroups returns W [out, in] as int8 in [groups, gs, out] (each
// group's rows of Wᵀ) and one symmetric scale per group and output
// channel, [groups, 1, out].
func quantizeGroups(w []float32, out, in, gs int) ([]byte, []float32) {
	groups := in / gs
	q := make([]byte, out*in)
	scales := make([]float32, groups*out)
	for o := range out {
		for gi := range groups {
			blk := w[o*in+gi*gs : o*in+(gi+1)*gs]
			scale := absMax(blk) / 127
			scales[gi*out+o] = scale
			if scale == 0 {
				continue
			}
			for i, v := range blk {
				q[(gi*gs+i)*out+o] = byte(int8(clampRound(v/scale, -127, 127)))
			}
		}
	}
	return q, scales
}

// quantizeBlocks returns W [out, in] as MatMulNBits' 8-bit B: codes q+128
// in [out, in/bs, bs] (W's own row-major layout) with one symmetric scale
// per output channel and block of bs, [out·in/bs].
func quantizeBlocks(w []float32, out, in, bs int) ([]byte, []float32) {
	codes := make([]byte, out*in)
	scales := make([]float32, out*in/bs)
	for blk := range scales {
		vals := w[blk*bs : (blk+1)*bs]
		scale := absMax(vals) / 127
		scales[blk] = scale
		for i, v := range vals {
			q := 0.0
			if scale != 0 {
				q = clampRound(v/scale, -127, 127)
			}
			codes[blk*bs+i] = byte(int(q) + 128)
		}
	}
	return codes, scales
}

// rawInit adds an initializer of any element type from little-endian bytes.
func (g *graph) rawInit(name string, elem onnxpb.TensorProto_DataType, shape []int, raw []byte) string {
	g.inits = append(g.inits, &onnxpb.TensorProto{
		Name: proto.String(name), Dims: dims64(shape),
		DataType: proto.Int32(int32(elem)), RawData: raw,
	})
	return name
}

// quantizeInt8 returns W [out, in] as int8 transposed to [in, out] (the
// layout DynamicQuantizeMatMul's B takes) and one scale per output row:
// scale = max|w_row| / 127, q = round(w / scale). Symmetric, so zero needs
// no zero point and the int8 range is used evenly.
func quantizeInt8(w []float32, out, in int) ([]byte, []float32) {
	q := make([]byte, out*in)
	scales := make([]float32, out)
	for o := range out {
		row := w[o*in : (o+1)*in]
		scale := absMax(row) / 127
		scales[o] = scale
		if scale == 0 {
			continue
		}
		for i, v := range row {
			q[i*out+o] = byte(int8(clampRound(v/scale, -127, 127)))
		}
	}
	return q, scales
}

func absMax(v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
}

func clampRound(v float32, lo, hi float64) float64 {
	return min(max(math.RoundToEven(float64(v)), lo), hi)
}

// QuantFile returns the file name of base's (ModelFile's or
// SharedPrefixFile's) variant with weights stored as q: base itself for
// QuantNone, else "model.int8.onnx" and the like. Every variant of a folder
// shares its data file.
func QuantFile(base string, q Quant) string {
	if q == QuantNone {
		return base
	}
	stem := strings.TrimSuffix(base, ".onnx")
	return stem + "." + q.String() + ".onnx"
}

// Quants lists the quantised kinds (every Quant but QuantNone).
func Quants() []Quant {
	return []Quant{QuantInt8, QuantInt8Block32, QuantInt8Group128, QuantInt8Mixed, QuantInt8Smooth, QuantInt8SmoothBlock32}
}

// quantizeRows returns x [rows, in] quantised per row for MatMulInteger:
// uint8 q+128 with q = round(x/scale) in [-127, 127], and the scales
// [rows] = absmax/127. The projections that read the same activations (q,
// k, v; gate, up) share one quantisation.
func (g *graph) quantizeRows(x string) (xq, scale string) {
	if q, ok := g.consts["aq:"+x]; ok {
		return q, g.consts["as:"+x]
	}
	amax := g.op("ReduceMax", []string{g.op("Abs", []string{x}), g.ints(-1)}, attrInt("keepdims", 0))
	// An all-zero row gets a tiny positive scale: it quantises to zeros
	// instead of dividing by zero.
	scale = g.op("Div", []string{g.op("Max", []string{amax, g.scalarFloat(1e-30)}), g.scalarFloat(127)})
	zps := g.op("Expand", []string{g.zp128(), g.op("Shape", []string{scale})})
	xq = g.op("QuantizeLinear", []string{x, scale, zps}, attrInt("axis", 0))
	g.consts["aq:"+x], g.consts["as:"+x] = xq, scale
	return xq, scale
}

// zp128 is the uint8 zero point that makes MatMulInteger's uint8 input
// represent symmetric int8 activations (q+128): uint8 x int8 is the integer
// product ORT runs fast (int8 x int8 measured 20x slower here).
func (g *graph) zp128() string {
	zp := "zp128"
	if _, ok := g.consts["zp128"]; !ok {
		g.consts["zp128"] = zp
		g.rawInit(zp, onnxpb.TensorProto_UINT8, nil, []byte{128})
	}
	return zp
}
