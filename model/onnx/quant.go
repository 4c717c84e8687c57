package onnx

import (
	"fmt"
	"math"
	"strings"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
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
)

var quantNames = [...]string{"fp32", "int8"}

// String returns the name used in metadata, flags and file names.
func (q Quant) String() string {
	if q < 0 || int(q) >= len(quantNames) {
		return fmt.Sprintf("Quant(%d)", int(q))
	}
	return quantNames[q]
}

// ParseQuant is the inverse of Quant.String.
func ParseQuant(s string) (Quant, error) {
	for i, n := range quantNames {
		if n == s {
			return Quant(i), nil
		}
	}
	return 0, fmt.Errorf("unknown weight quantisation %q (want one of %v)", s, quantNames)
}

// MetaQuant records a quantised graph's Quant.String(); absent means float32.
const MetaQuant = "rerankd.quant"

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
	case QuantInt8:
		if !done {
			qw, scales := quantizeInt8(w, out, in)
			g.rawInit(b, onnxpb.TensorProto_INT8, []int{in, out}, qw)
			g.floatInit(s, []int{out}, scales)
		}
		xq, rs := g.quantizeRows(x)
		y := g.op("MatMulInteger", []string{xq, b, g.zp128()})
		yf := g.op("DequantizeLinear", []string{y, rs}, attrInt("axis", 0))
		return g.op("Mul", []string{yf, s})
	default:
		panic(fmt.Sprintf("onnx: quantLinear with %v", q))
	}
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
func Quants() []Quant { return []Quant{QuantInt8} }

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
