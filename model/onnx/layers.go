package onnx

import (
	"fmt"
	"math"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// maskValue is added to the scores of keys a query must not see. Finite, so
// a row with no visible key (a fully padded sequence) softmaxes to a uniform
// distribution instead of NaN.
const maskValue = -1e9

// decoder builds the Qwen3 (or Qwen2: q/k/v biases, no q/k norms) graph. The residual stream is kept 2-D as
// [batch*seq, hidden] so every projection is one Gemm with transB=1 against
// the weight in its Hugging Face [out, in] layout: initializers keep arch's
// names and shapes and need no transposed copy.
type decoder struct {
	*graph
	cfg arch.Config
	w   *arch.Weights

	batch, seq   string // 0-D int64 batch and sequence sizes
	batch1, seq1 string // the same as 1-element vectors, for building shapes
	at           ropeAt // RoPE at every position of the [batch, seq] layout
	mask         string // additive attention mask [batch, 1, 1, seq, seq]
	quant        Quant  // how projection weights are stored (see proj)
	fuse         Fusion // contrib kernels to write (see Fusion)
	// RotaryEmbedding's tables [positions, head_dim/2] (FuseRotary).
	cosCache, sinCache string
	shapes             map[string]string
	// renamed lists the tensors of w that a weight transform changed
	// (prepareWeights): their initializers are named smoothName(name).
	renamed map[string]bool
}

// ropeAt says where a set of rows sits for RoPE: cos and sin tables
// broadcasting against [rows..., heads, head_dim] (sin carrying
// rotate-half's sign), or with FuseRotary the position ids
// RotaryEmbedding reads ([batch, seq], or a 1-element start) and the shapes
// that take the rows to its [batch, seq, heads*head_dim] input and back
// (per heads: flat(heads), back(heads)).
type ropeAt struct {
	cos, sin   string
	pos        string
	flat, back func(heads int64) string
}

// weight adds a tensor of w as an initializer (once) and returns its name.
func (d *decoder) weight(name string) (string, error) {
	if init, ok := d.consts["w:"+name]; ok {
		return init, nil
	}
	t, ok := d.w.Tensors[name]
	if !ok {
		return "", fmt.Errorf("missing tensor %s", name)
	}
	init := name
	if d.renamed[name] {
		init = smoothName(name)
	}
	d.consts["w:"+name] = init
	return d.floatInit(init, t.Shape, t.Data), nil
}

// shapeBS returns the shape vector [batch, seq, rest...].
func (d *decoder) shapeBS(rest ...int64) string {
	key := fmt.Sprint(rest)
	if n, ok := d.shapes[key]; ok {
		return n
	}
	n := d.op("Concat", []string{d.batch1, d.seq1, d.ints(rest...)}, attrInt("axis", 0))
	d.shapes[key] = n
	return n
}

// prologue derives batch/seq sizes, RoPE tables and the attention mask from
// the inputs; every layer shares them.
func (d *decoder) prologue(ids, mask string) {
	d.scope = "prologue"
	shp := d.op("Shape", []string{ids})
	d.batch = d.op("Gather", []string{shp, d.scalarInt(0)}, attrInt("axis", 0))
	d.seq = d.op("Gather", []string{shp, d.scalarInt(1)}, attrInt("axis", 0))
	d.batch1 = d.op("Unsqueeze", []string{d.batch, d.ints(0)})
	d.seq1 = d.op("Unsqueeze", []string{d.seq, d.ints(0)})
	pos := d.op("Range", []string{d.scalarInt(0), d.seq, d.scalarInt(1)}) // [seq] int64

	hd := d.cfg.HeadDim
	if d.fuse&FuseRotary != 0 {
		// RotaryEmbedding reads the tables at position_ids; a 1-element
		// position_ids is the first position of every row.
		d.ropeCache()
		d.at = ropeAt{pos: d.ints(0),
			flat: func(heads int64) string { return d.shapeBS(heads * int64(hd)) },
			back: func(heads int64) string { return d.shapeBS(heads, int64(hd)) }}
	} else {
		d.at = d.ropeComputed(pos)
	}

	// Mask: query i sees key j iff j <= i and key j is a real token.
	row := d.op("Unsqueeze", []string{pos, d.ints(1)}) // [seq, 1] = i
	col := d.op("Unsqueeze", []string{pos, d.ints(0)}) // [1, seq] = j
	causal := d.op("LessOrEqual", []string{col, row})  // [seq, seq]
	keyOK := d.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	keyOK = d.op("Unsqueeze", []string{keyOK, d.ints(1)}) // [batch, 1, seq]
	allowed := d.op("And", []string{causal, keyOK})       // [batch, seq, seq]
	add := d.op("Where", []string{allowed, d.scalarFloat(0), d.scalarFloat(maskValue)})
	d.mask = d.op("Unsqueeze", []string{add, d.ints(1, 2)})
}

// rmsNorm writes x / sqrt(mean(x², last axis) + eps) * weight in the form
// ORT fuses into SimplifiedLayerNormalization.
func (d *decoder) rmsNorm(x, weight string) string {
	sq := d.op("Pow", []string{x, d.scalarFloat(2)})
	ms := d.op("ReduceMean", []string{sq, d.ints(-1)}, attrInt("keepdims", 1))
	rms := d.op("Sqrt", []string{d.op("Add", []string{ms, d.scalarFloat(float32(d.cfg.RMSNormEps))})})
	return d.op("Mul", []string{d.op("Div", []string{x, rms}), weight})
}

// ropeComputed returns RoPE tables computed in the graph for positions pos
// [n]: cos/sin [n, 1, head_dim] with angle[p, i] = p * inv_freq[i] for
// i < head_dim/2, in float32 as Hugging Face computes it, repeated for both
// halves (sin carrying rotate-half's sign).
func (d *decoder) ropeComputed(pos string) ropeAt {
	hd := d.cfg.HeadDim
	inv := make([]float32, hd/2)
	for i := range inv {
		inv[i] = float32(math.Pow(d.cfg.RopeTheta, -float64(2*i)/float64(hd)))
	}
	invFreq := d.floatInit("rope.inv_freq", []int{hd / 2}, inv)
	posF := d.op("Cast", []string{pos}, attrInt("to", int64(onnxpb.TensorProto_FLOAT)))
	ang := d.op("Mul", []string{d.op("Unsqueeze", []string{posF, d.ints(1)}), invFreq}) // [n, hd/2]
	c, s := d.op("Cos", []string{ang}), d.op("Sin", []string{ang})
	cos := d.op("Concat", []string{c, c}, attrInt("axis", -1))
	sin := d.op("Concat", []string{d.op("Neg", []string{s}), s}, attrInt("axis", -1))
	return ropeAt{cos: d.op("Unsqueeze", []string{cos, d.ints(1)}), sin: d.op("Unsqueeze", []string{sin, d.ints(1)})}
}

// ropeCache sets d.cosCache and d.sinCache to RotaryEmbedding's tables,
// [positions, head_dim/2] initializers for every position the model
// takes (max_position_embeddings): cos and sin of the angle
// pos*theta^(-2i/head_dim), rounded to float32 as Hugging Face computes it
// (as model/ref does). Constants, not computed per run: a table computed
// in the graph gets its values from kernels whose vectorised body and
// scalar tail round differently, so a position's values would depend on
// the table's length, i.e. on the batch.
func (d *decoder) ropeCache() {
	n := d.cfg.MaxPositionEmbeddings
	if n <= 0 {
		n = defaultMaxPositions
	}
	half := d.cfg.HeadDim / 2
	cos, sin := make([]float32, n*half), make([]float32, n*half)
	for i := range half {
		inv := float32(math.Pow(d.cfg.RopeTheta, -float64(2*i)/float64(d.cfg.HeadDim)))
		for p := range n {
			ang := float64(float32(p) * inv)
			cos[p*half+i], sin[p*half+i] = float32(math.Cos(ang)), float32(math.Sin(ang))
		}
	}
	d.cosCache = d.floatInit("rope.cos", []int{n, half}, cos)
	d.sinCache = d.floatInit("rope.sin", []int{n, half}, sin)
}

// defaultMaxPositions is the RoPE table length for a config without
// max_position_embeddings.
const defaultMaxPositions = 32768

// addNorm returns rmsNorm(h + delta) and the sum h + delta, the residual
// stream after it; without delta (the first layer) rmsNorm(h) and h. With
// FuseSkipNorm the two are one SkipSimplifiedLayerNormalization.
func (d *decoder) addNorm(h, delta, weight string) (normed, sum string) {
	if delta == "" {
		return d.rmsNorm(h, weight), h
	}
	if d.fuse&FuseSkipNorm != 0 {
		o := d.msOp("SkipSimplifiedLayerNormalization", 4, []int{0, 3}, []string{h, delta, weight},
			attrFloat("epsilon", float32(d.cfg.RMSNormEps)))
		return o[0], o[3]
	}
	sum = d.op("Add", []string{h, delta})
	return d.rmsNorm(sum, weight), sum
}

// linear computes x·Wᵀ for x [rows, in] and W [out, in].
func (d *decoder) linear(x, weight string) string {
	return d.op("Gemm", []string{x, weight}, attrInt("transB", 1))
}

// projections are the layer tensors d.quant applies to: the matrices that
// hold nearly all of a layer's weights and FLOPs.
var projections = map[string]bool{
	arch.QProj: true, arch.KProj: true, arch.VProj: true, arch.OProj: true,
	arch.GateProj: true, arch.UpProj: true, arch.DownProj: true,
}

// layerWeights returns layer l's tensor names by arch suffix. Float tensors
// become initializers now; with quantisation the projections are only
// checked here, and proj adds their quantised forms.
func (d *decoder) layerWeights(l int) (map[string]string, error) {
	ws := map[string]string{}
	names := []string{arch.InputNorm, arch.QProj, arch.KProj, arch.VProj, arch.OProj,
		arch.PostNorm, arch.GateProj, arch.UpProj, arch.DownProj}
	if d.cfg.QKNorm() {
		names = append(names, arch.QNorm, arch.KNorm)
	}
	if d.cfg.QKVBias() {
		// Biases stay float32 in every variant: added after the product.
		names = append(names, arch.QBias, arch.KBias, arch.VBias)
	}
	for _, n := range names {
		full := arch.LayerTensor(l, n)
		if projections[n] && d.quant.forTensor(full) != QuantNone {
			if _, ok := d.w.Tensors[full]; !ok {
				return nil, fmt.Errorf("missing tensor %s", full)
			}
			ws[n] = full
			continue
		}
		name, err := d.weight(full)
		if err != nil {
			return nil, err
		}
		ws[n] = name
	}
	return ws, nil
}

// proj computes x·Wᵀ (+ b) for the projection ws[which] (an arch suffix:
// arch.QProj, ...), stored as d.quant says. Its bias, where the
// architecture has one (Qwen2's q/k/v), is float32 in every variant and
// added after the product: Gemm's C input in float32, an Add after the
// dequantised int8 product.
func (d *decoder) proj(x string, ws map[string]string, which string) string {
	tensor := ws[which]
	bias := ws[arch.ProjBias(which)]
	q := d.quant.forTensor(tensor)
	if q == QuantNone {
		if bias != "" {
			return d.op("Gemm", []string{x, tensor, bias}, attrInt("transB", 1))
		}
		return d.linear(x, tensor)
	}
	var y string
	if q.blockSize() > 0 {
		y = d.fusedProj(x, ws, which, q)
	} else {
		t := d.w.Tensors[tensor]
		y = d.quantLinear(x, tensor, t.Shape, t.Data, q)
	}
	if bias != "" {
		y = d.op("Add", []string{y, bias})
	}
	return y
}

// fusedWith lists, for the first projection of a group that reads the
// same input, the group: one MatMulNBits over the concatenated weights
// quantises the input once (MatMulNBits quantises its input per call)
// and runs one wider product. k starts a group of its own where a graph
// computes keys and values without queries (the shared-prefix graph's
// last layer).
var fusedWith = map[string][]string{
	arch.QProj:    {arch.QProj, arch.KProj, arch.VProj},
	arch.KProj:    {arch.KProj, arch.VProj},
	arch.GateProj: {arch.GateProj, arch.UpProj},
}

// fusedProj is proj for the MatMulNBits kinds: the group of which (see
// fusedWith) is computed by one node on its first member's call, split,
// and the other members' outputs kept for their calls on the same x.
func (d *decoder) fusedProj(x string, ws map[string]string, which string, q Quant) string {
	key := "fz:" + x + ":" + ws[which]
	if y, ok := d.consts[key]; ok {
		return y
	}
	group := fusedWith[which]
	if len(group) == 0 {
		group = []string{which}
	}
	names := make([]string, len(group))
	var data []float32
	var sizes []int64
	in := 0
	for i, m := range group {
		names[i] = ws[m]
		t := d.w.Tensors[ws[m]]
		in = t.Shape[1]
		sizes = append(sizes, int64(t.Shape[0]))
		if len(group) > 1 {
			data = append(data, t.Data...)
		} else {
			data = t.Data
		}
	}
	out := 0
	for _, s := range sizes {
		out += int(s)
	}
	name := strings.Join(names, "+")
	y := d.quantLinear(x, name, []int{out, in}, data, q)
	if len(group) == 1 {
		return y
	}
	parts := d.opN("Split", len(group), []string{y, d.ints(sizes...)}, attrInt("axis", -1))
	for i, n := range names {
		d.consts["fz:"+x+":"+n] = parts[i]
	}
	return parts[0]
}

// qkNorm applies a q_norm/k_norm gain to x [..., head_dim]; without one
// (Qwen2) x is returned as it is.
func (d *decoder) qkNorm(x, weight string) string {
	if weight == "" {
		return x
	}
	return d.rmsNorm(x, weight)
}

// rope rotates x [rows..., heads, head_dim] at at: x*cos + rotate_half(x)*sin,
// with rotate_half([x1, x2]) = [-x2, x1] (the sign lives in at.sin); with
// FuseRotary one RotaryEmbedding (not interleaved: the same halves).
func (d *decoder) rope(x string, heads int64, at ropeAt) string {
	if d.fuse&FuseRotary != 0 {
		flat := d.op("Reshape", []string{x, at.flat(heads)})
		r := d.msOp("RotaryEmbedding", 1, []int{0}, []string{flat, at.pos, d.cosCache, d.sinCache},
			attrInt("interleaved", 0), attrInt("num_heads", heads))[0]
		return d.op("Reshape", []string{r, at.back(heads)})
	}
	halves := d.opN("Split", 2, []string{x}, attrInt("axis", -1), attrInt("num_outputs", 2))
	rot := d.op("Concat", []string{halves[1], halves[0]}, attrInt("axis", -1))
	return d.op("Add", []string{d.op("Mul", []string{x, at.cos}), d.op("Mul", []string{rot, at.sin})})
}

// scale is attention's 1/sqrt(head_dim).
func (d *decoder) scale() float32 { return float32(1 / math.Sqrt(float64(d.cfg.HeadDim))) }

// scaleQuery multiplies queries by scale(), unless FuseScores folds it into
// the scores' FusedMatMul.
func (d *decoder) scaleQuery(q string) string {
	if d.fuse&FuseScores != 0 {
		return q
	}
	return d.op("Mul", []string{q, d.scalarFloat(d.scale())})
}

// scores returns q·kᵀ (times scale() with FuseScores) for q [..., n, hd]
// and keys k [..., m, hd], broadcasting the leading axes. Without
// FuseScores kT is the keys already transposed, [..., hd, m], and k is not
// used; with it k is, and kT is not (neither is built unless used: the
// callers pass thunks).
func (d *decoder) scores(q string, k, kT func() string) string {
	if d.fuse&FuseScores != 0 {
		return d.msOp("FusedMatMul", 1, []int{0}, []string{q, k()}, attrInt("transB", 1), attrFloat("alpha", d.scale()))[0]
	}
	return d.op("MatMul", []string{q, kT()})
}

// heads returns the attention shape: query heads, key/value heads, head
// size, and query heads per key/value head (GQA's group).
func (d *decoder) heads() (nh, nkv, hd, group int64) {
	nh, nkv, hd = int64(d.cfg.NumAttentionHeads), int64(d.cfg.NumKeyValueHeads), int64(d.cfg.HeadDim)
	return nh, nkv, hd, nh / nkv
}

// layer appends decoder block l to the residual stream h [batch*seq, hidden]
// plus delta (the previous block's output, not yet added: "" for none) and
// returns the stream and this block's output, likewise.
func (d *decoder) layer(l int, h, delta string) (string, string, error) {
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", "", err
	}
	nh, nkv, hd, group := d.heads()

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	a, h := d.addNorm(h, delta, ws[arch.InputNorm])
	// q: [B,S,nh,hd] -> norm, rope, scale -> [B,nkv,group,S,hd]; query head
	// kvh*group+j uses kv head kvh, as in Hugging Face's repeat_kv.
	q := d.op("Reshape", []string{d.proj(a, ws, arch.QProj), d.shapeBS(nh, hd)})
	q = d.scaleQuery(d.rope(d.qkNorm(q, ws[arch.QNorm]), nh, d.at))
	q = d.op("Reshape", []string{q, d.shapeBS(nkv, group, hd)})
	q = d.op("Transpose", []string{q}, attrInts("perm", 0, 2, 3, 1, 4))
	// k: [B,S,nkv,hd] -> norm, rope -> [B,nkv,1,S,hd] or kᵀ [B,nkv,1,hd,S]
	// (broadcast over group).
	k := d.op("Reshape", []string{d.proj(a, ws, arch.KProj), d.shapeBS(nkv, hd)})
	k = d.rope(d.qkNorm(k, ws[arch.KNorm]), nkv, d.at)
	k = d.op("Reshape", []string{k, d.shapeBS(nkv, 1, hd)})
	// v: [B,nkv,1,S,hd].
	v := d.op("Reshape", []string{d.proj(a, ws, arch.VProj), d.shapeBS(nkv, 1, hd)})
	v = d.op("Transpose", []string{v}, attrInts("perm", 0, 2, 3, 1, 4))

	qk := d.scores(q,
		func() string { return d.op("Transpose", []string{k}, attrInts("perm", 0, 2, 3, 1, 4)) },
		func() string { return d.op("Transpose", []string{k}, attrInts("perm", 0, 2, 3, 4, 1)) })
	scores := d.op("Add", []string{qk, d.mask}) // [B,nkv,group,S,S]
	p := d.op("Softmax", []string{scores}, attrInt("axis", -1))
	o := d.op("MatMul", []string{p, v})                                 // [B,nkv,group,S,hd]
	o = d.op("Transpose", []string{o}, attrInts("perm", 0, 3, 1, 2, 4)) // [B,S,nkv,group,hd]
	o = d.op("Reshape", []string{o, d.ints(-1, nh*hd)})

	d.scope = fmt.Sprintf("layers.%d/mlp", l)
	m, h := d.addNorm(h, d.proj(o, ws, arch.OProj), ws[arch.PostNorm])
	return h, d.mlp(m, ws), nil
}

// mlp returns a block's feed-forward output (SwiGLU) for m [rows, hidden],
// the post-attention-normed stream; the caller adds it to the stream.
func (d *decoder) mlp(m string, ws map[string]string) string {
	gate := d.proj(m, ws, arch.GateProj)
	act := d.op("Mul", []string{gate, d.op("Sigmoid", []string{gate})}) // silu
	act = d.op("Mul", []string{act, d.proj(m, ws, arch.UpProj)})
	return d.proj(act, ws, arch.DownProj)
}
