package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Encoder graphs (BERT, XLM-R; arch.EncoderConfig). Inputs are right-padded
// int64 [batch, seq]: input_ids, attention_mask, and token_type_ids when
// the model has more than one token type (BERT; XLM-R's are always 0 and
// the graph adds type row 0 itself, as transformers does without the
// input). Attention is bidirectional over each row's real tokens, so a
// row's outputs at its real positions do not depend on its padding or on
// the other rows. Outputs: a classifier's logits, float32 [batch] (the
// single label's logit, or label 1 minus label 0 for a two-label softmax,
// as ref.EncoderScoreLogit), or a bare encoder's last_hidden_state, float32
// [batch, seq, hidden], pooled by the runtime (model.Embedder's contract).
const (
	// TokenTypeIDs is the optional third input.
	TokenTypeIDs = "token_type_ids"
	// MetaEncoderConfig holds the arch.EncoderConfig as JSON (decoder
	// graphs use MetaConfig, so neither is read as the other).
	MetaEncoderConfig = "rerankd.encoder_config"
	// MetaEncoderFusion names the graph's EncoderFusion (absent: none).
	MetaEncoderFusion = "rerankd.encoder_fusion"
)

// EncoderOptions configure BuildEncoder.
type EncoderOptions struct {
	// Storage decides how Save lays the weights out on disk.
	Storage Storage
	// Quant selects how the layers' projections are stored (QuantNone:
	// float32 Gemm). Embeddings, LayerNorms, biases and heads stay float32.
	Quant Quant
	// Fusion selects ONNX Runtime contrib kernels written in place of
	// standard-op subgraphs (EncoderFusion); 0 writes standard ONNX ops
	// only. NewEncoderOptions sets DefaultEncoderFusion.
	Fusion EncoderFusion
}

// EncoderFusion is a set of ONNX Runtime contrib kernels (domain
// com.microsoft, CPU kernels in ONNX Runtime 1.30) an encoder graph may
// use. Each computes the same function as the standard ops it replaces up
// to float32 rounding; none changes the weights' names or layout, so
// Model.EncoderWeights reads the same tensors back from every form.
type EncoderFusion uint8

const (
	// EncoderFuseSkipNorm writes each sublayer's output projection, its
	// bias, the residual add and the post-LayerNorm that follows (BERT's
	// order: LayerNorm(x·Wᵀ + b + residual), epsilon from the config) as
	// a bias-free product and one SkipLayerNormalization.
	EncoderFuseSkipNorm EncoderFusion = 1 << iota
	// EncoderFuseGelu writes the intermediate projection's bias and the
	// activation as one kernel: BiasGelu for the exact erf "gelu",
	// FastGelu (its tanh formula, with the bias) for "gelu_new" and
	// "gelu_pytorch_tanh". FastGelu is never written for an erf model;
	// "relu" has nothing to fuse and is left as it is.
	EncoderFuseGelu
	// EncoderFuseAttention writes scaled dot-product attention over the
	// projected queries, keys and values, with the padding mask, as one
	// MultiHeadAttention (key_padding_mask: attention_mask as int32). Not
	// the Attention kernel: that one takes the three projections packed
	// as one [hidden, 3·hidden] weight, a second copy of them in another
	// layout, and only in float32, where MultiHeadAttention takes the
	// projections' outputs whatever Quant computed them.
	EncoderFuseAttention

	encoderFuseAll = EncoderFuseSkipNorm | EncoderFuseGelu | EncoderFuseAttention
)

var encoderFusionNames = []struct {
	f    EncoderFusion
	name string
}{{EncoderFuseSkipNorm, "skipnorm"}, {EncoderFuseGelu, "gelu"}, {EncoderFuseAttention, "attention"}}

// AllEncoderFusions is every fusion BuildEncoder writes.
const AllEncoderFusions = encoderFuseAll

// DefaultEncoderFusion is what NewEncoderOptions (and so every converted
// encoder folder unless asked otherwise) uses: standard ops only. On CPU
// SkipLayerNormalization and BiasGelu cost more than the ops they replace,
// and MultiHeadAttention gained only at bge-reranker-v2-m3's size, on few
// requests, while losing on MiniLM's (docs/perf/encoders.md).
const DefaultEncoderFusion EncoderFusion = 0

// String lists the set's names joined by "+" ("none" when empty).
func (f EncoderFusion) String() string {
	var parts []string
	for _, n := range encoderFusionNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	if rest := f &^ encoderFuseAll; rest != 0 {
		parts = append(parts, fmt.Sprintf("EncoderFusion(%#x)", uint8(rest)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// ParseEncoderFusion is the inverse of EncoderFusion.String ("all" is
// every fusion).
func ParseEncoderFusion(s string) (EncoderFusion, error) {
	switch s {
	case "none", "":
		return 0, nil
	case "all":
		return encoderFuseAll, nil
	}
	var f EncoderFusion
	for _, part := range strings.Split(s, "+") {
		found := false
		for _, n := range encoderFusionNames {
			if n.name == part {
				f, found = f|n.f, true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown encoder fusion %q (want none, all, or names from skipnorm, gelu, attention joined by +)", part)
		}
	}
	return f, nil
}

// NewEncoderOptions returns the defaults: float32, weights in external
// data whatever their size (EncoderStorage), DefaultEncoderFusion.
func NewEncoderOptions() EncoderOptions {
	return EncoderOptions{Storage: EncoderStorage(), Fusion: DefaultEncoderFusion}
}

// EncoderStorage is how encoder graphs store their weights: in
// model.onnx.data at page-aligned offsets, even for a small model. ONNX
// Runtime, loading a graph from its path, maps that file rather than
// copying it, so a session's weights cost page cache shared with other
// processes, and an embedding table's untouched rows cost nothing; weights
// inside the protobuf are parsed onto the heap instead, and each variant
// graph (model.int8.onnx) would carry its own copy of the embeddings and
// norms, which the data file holds once for all of them.
func EncoderStorage() Storage {
	s := DefaultStorage()
	s.ForceExternal = true
	return s
}

// Validate reports every problem at once.
func (o EncoderOptions) Validate() error {
	var errs []error
	switch {
	case !o.Quant.Valid():
		errs = append(errs, fmt.Errorf("unknown quantisation %v", o.Quant))
	case o.Quant == QuantInt8Mixed || o.Quant.smooths():
		// Both name decoder tensors (down_proj, the RMSNorm gains).
		errs = append(errs, fmt.Errorf("quantisation %v is for decoder rerankers, not encoders", o.Quant))
	}
	if o.Fusion&^encoderFuseAll != 0 {
		errs = append(errs, fmt.Errorf("unknown encoder fusion %v", o.Fusion))
	}
	if err := o.Storage.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// encoder builds one encoder graph; the residual stream is [batch*seq,
// hidden] so every projection is one Gemm (transB=1) against the weight in
// its Hugging Face layout, as in the decoder graphs.
type encoder struct {
	*graph
	cfg          arch.EncoderConfig
	w            *arch.EncoderWeights
	quant        Quant
	fuse         EncoderFusion
	batch1, seq1 string // 1-element batch and sequence sizes
	mask         string // additive key mask [batch, 1, 1, seq] (standard-op attention)
	keyMask      string // attention_mask as int32 [batch, seq] (EncoderFuseAttention)
}

// BuildEncoder writes the encoder of w as an ONNX graph: logits for a
// classifier, last_hidden_state for a bare encoder. The model shares
// memory with w's tensors.
func BuildEncoder(w *arch.EncoderWeights, opts EncoderOptions) (*Model, error) {
	if w == nil {
		return nil, errors.New("onnx: nil weights")
	}
	if err := errors.Join(opts.Validate(), w.Check()); err != nil {
		return nil, fmt.Errorf("onnx: build encoder: %w", err)
	}
	c := w.Config
	e := &encoder{graph: newGraph(), cfg: c, w: w, quant: opts.Quant, fuse: opts.Fusion}
	ids := e.input(InputIDs, onnxpb.TensorProto_INT64, "batch", "seq")
	mask := e.input(AttentionMask, onnxpb.TensorProto_INT64, "batch", "seq")
	types := ""
	if c.TypeVocabSize > 1 {
		types = e.input(TokenTypeIDs, onnxpb.TensorProto_INT64, "batch", "seq")
	}
	x := e.embeddings(ids, mask, types)
	for l := range c.NumHiddenLayers {
		x = e.layer(l, x)
	}
	kind := KindEmbedding
	if c.Classifier() {
		kind = KindReranker
		e.classifier(x)
	} else {
		e.scope = "final"
		e.opTo(OutputLastHidden, "Reshape", []string{x, e.shapeBS(int64(c.HiddenSize))})
		e.output(OutputLastHidden, onnxpb.TensorProto_FLOAT, "batch", "seq", c.HiddenSize)
	}
	cfgJSON, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("onnx: config: %w", err)
	}
	doc := fmt.Sprintf("%s encoder %v (%d layers, hidden %d), output %s. Inputs right-padded; see github.com/rerankd/rerankd/model/onnx.",
		c.Family(), c.Architectures, c.NumHiddenLayers, c.HiddenSize, map[string]string{KindReranker: OutputLogits, KindEmbedding: OutputLastHidden}[kind])
	m := newModel(e.graph, "rerankd_encoder", doc, opts.Storage)
	m.setMeta(MetaKind, kind)
	m.setMeta(MetaEncoderConfig, string(cfgJSON))
	if opts.Quant != QuantNone {
		m.setMeta(MetaQuant, opts.Quant.String())
	}
	if opts.Fusion != 0 {
		m.setMeta(MetaEncoderFusion, opts.Fusion.String())
	}
	return m, nil
}

// weight adds tensor name of w as an initializer (once) and returns it.
// Names come from arch.EncoderConfig.Shapes, which Check has verified.
func (e *encoder) weight(name string) string {
	if _, ok := e.consts["w:"+name]; ok {
		return name
	}
	e.consts["w:"+name] = name
	t := e.w.Tensors[name]
	return e.floatInit(name, t.Shape, t.Data)
}

// shapeBS returns the shape vector [batch, seq, rest...].
func (e *encoder) shapeBS(rest ...int64) string {
	return e.op("Concat", []string{e.batch1, e.seq1, e.ints(rest...)}, attrInt("axis", 0))
}

// embeddings returns LayerNorm(word + token type + position) as [batch*seq,
// hidden] and sets the sizes and the attention mask.
func (e *encoder) embeddings(ids, mask, types string) string {
	e.scope = "embeddings"
	shp := e.op("Shape", []string{ids})
	e.batch1 = e.op("Slice", []string{shp, e.ints(0), e.ints(1)})
	e.seq1 = e.op("Slice", []string{shp, e.ints(1), e.ints(2)})
	seq := e.op("Squeeze", []string{e.seq1, e.ints(0)})

	x := e.op("Gather", []string{e.weight(arch.EncWordEmbeddings), ids}, attrInt("axis", 0)) // [B,S,H]
	typeTable := e.weight(arch.EncTypeEmbeddings)
	if types != "" {
		x = e.op("Add", []string{x, e.op("Gather", []string{typeTable, types}, attrInt("axis", 0))})
	} else {
		x = e.op("Add", []string{x, e.op("Gather", []string{typeTable, e.scalarInt(0)}, attrInt("axis", 0))})
	}
	var pos string
	if e.cfg.Family() == arch.FamilyXLMR {
		// padding_idx + cumsum(mask) * mask: real tokens from padding_idx + 1,
		// padding at padding_idx (transformers derives the mask from
		// input_ids != padding_idx; under right padding both are the same).
		cum := e.op("CumSum", []string{mask, e.scalarInt(1)})
		pos = e.op("Add", []string{e.op("Mul", []string{cum, mask}), e.scalarInt(int64(e.cfg.PadID()))})
	} else {
		pos = e.op("Range", []string{e.scalarInt(0), seq, e.scalarInt(1)}) // [S]
	}
	x = e.op("Add", []string{x, e.op("Gather", []string{e.weight(arch.EncPositionEmbeddings), pos}, attrInt("axis", 0))})
	x = e.op("Reshape", []string{x, e.ints(-1, int64(e.cfg.HiddenSize))})

	if e.fuse&EncoderFuseAttention != 0 {
		e.keyMask = e.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_INT32)))
	} else {
		keyOK := e.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
		add := e.op("Where", []string{keyOK, e.scalarFloat(0), e.scalarFloat(maskValue)}) // [B,S]
		e.mask = e.op("Unsqueeze", []string{add, e.ints(1, 2)})                           // [B,1,1,S]
	}
	return e.layerNorm(x, arch.EncEmbedNormWeight, arch.EncEmbedNormBias)
}

// layerNorm is ONNX's LayerNormalization over the last axis.
func (e *encoder) layerNorm(x, gain, bias string) string {
	return e.op("LayerNormalization", []string{x, e.weight(gain), e.weight(bias)},
		attrInt("axis", -1), attrFloat("epsilon", float32(e.cfg.LayerNormEps)))
}

// affine computes x·Wᵀ + b for the tensor pair (weight, bias), quantised
// per e.quant for the layers' projections (layer true).
func (e *encoder) affine(x, weight, bias string, layer bool) string {
	if q := e.quant.forTensor(weight); layer && q != QuantNone {
		return e.op("Add", []string{e.product(x, weight), e.weight(bias)})
	}
	return e.op("Gemm", []string{x, e.weight(weight), e.weight(bias)}, attrInt("transB", 1))
}

// product computes x·Wᵀ for a layer projection without its bias, for the
// fused kernels that add the bias themselves; quantised per e.quant.
func (e *encoder) product(x, weight string) string {
	if q := e.quant.forTensor(weight); q != QuantNone {
		t := e.w.Tensors[weight]
		return e.quantLinear(x, weight, t.Shape, t.Data, q)
	}
	return e.op("Gemm", []string{x, e.weight(weight)}, attrInt("transB", 1))
}

// addNorm is a sublayer's end: LayerNorm(x·Wᵀ + b + residual) for the
// projection (weight, bias) and the norm (gain, beta), post-LN as BERT
// and XLM-R compute it; with EncoderFuseSkipNorm one
// SkipLayerNormalization adds the bias and the residual to the product.
func (e *encoder) addNorm(x, residual, weight, bias, gain, beta string) string {
	if e.fuse&EncoderFuseSkipNorm == 0 {
		return e.layerNorm(e.op("Add", []string{e.affine(x, weight, bias, true), residual}), gain, beta)
	}
	return e.msOp("SkipLayerNormalization", 4, []int{0},
		[]string{e.product(x, weight), residual, e.weight(gain), e.weight(beta), e.weight(bias)},
		attrFloat("epsilon", float32(e.cfg.LayerNormEps)))[0]
}

// attention returns the heads' outputs [batch*seq, hidden] of layer l's
// self-attention over x: softmax(q·kᵀ/√head_dim + padding mask)·v.
func (e *encoder) attention(l int, x string) string {
	t := func(name string) string { return arch.EncoderLayerTensor(l, name) }
	nh, hd := int64(e.cfg.NumAttentionHeads), int64(e.cfg.HeadDim())
	if e.fuse&EncoderFuseAttention != 0 {
		// [B,S,hidden] in and out; the kernel splits the heads, scales by
		// 1/√head_dim (its default) and masks keys where key_padding_mask
		// is 0 with mask_filter_value.
		proj := func(w, b string) string {
			return e.op("Reshape", []string{e.affine(x, t(w), t(b), true), e.shapeBS(nh * hd)})
		}
		q, k, v := proj(arch.EncQuery, arch.EncQueryBias), proj(arch.EncKey, arch.EncKeyBias), proj(arch.EncValue, arch.EncValueBias)
		o := e.msOp("MultiHeadAttention", 3, []int{0}, []string{q, k, v, "", e.keyMask},
			attrInt("num_heads", nh), attrFloat("mask_filter_value", maskValue))[0]
		return e.op("Reshape", []string{o, e.ints(-1, nh*hd)})
	}
	heads := func(w, b string, perm ...int64) string {
		y := e.op("Reshape", []string{e.affine(x, t(w), t(b), true), e.shapeBS(nh, hd)})
		return e.op("Transpose", []string{y}, attrInts("perm", perm...))
	}
	q := heads(arch.EncQuery, arch.EncQueryBias, 0, 2, 1, 3) // [B,nh,S,hd]
	q = e.op("Mul", []string{q, e.scalarFloat(float32(1 / math.Sqrt(float64(hd))))})
	kT := heads(arch.EncKey, arch.EncKeyBias, 0, 2, 3, 1)    // [B,nh,hd,S]
	v := heads(arch.EncValue, arch.EncValueBias, 0, 2, 1, 3) // [B,nh,S,hd]
	scores := e.op("Add", []string{e.op("MatMul", []string{q, kT}), e.mask})
	p := e.op("Softmax", []string{scores}, attrInt("axis", -1))
	o := e.op("Transpose", []string{e.op("MatMul", []string{p, v})}, attrInts("perm", 0, 2, 1, 3)) // [B,S,nh,hd]
	return e.op("Reshape", []string{o, e.ints(-1, nh*hd)})
}

// layer appends encoder block l to x [batch*seq, hidden].
func (e *encoder) layer(l int, x string) string {
	t := func(name string) string { return arch.EncoderLayerTensor(l, name) }
	e.scope = fmt.Sprintf("layer.%d/attention", l)
	o := e.attention(l, x)
	x = e.addNorm(o, x, t(arch.EncAttnOut), t(arch.EncAttnOutB), t(arch.EncAttnNormW), t(arch.EncAttnNormB))

	e.scope = fmt.Sprintf("layer.%d/mlp", l)
	m := e.intermediate(x, t(arch.EncInter), t(arch.EncInterBias))
	return e.addNorm(m, x, t(arch.EncOut), t(arch.EncOutBias), t(arch.EncOutNormW), t(arch.EncOutNormB))
}

// intermediate returns act(x·Wᵀ + b) for the MLP's first projection; with
// EncoderFuseGelu the bias and a GELU are one kernel of the same formula.
func (e *encoder) intermediate(x, weight, bias string) string {
	if e.fuse&EncoderFuseGelu != 0 {
		switch e.cfg.HiddenAct {
		case "gelu": // erf: BiasGelu computes 0.5·y·(1 + erf(y/√2)), y = x + bias
			return e.msOp("BiasGelu", 1, []int{0}, []string{e.product(x, weight), e.weight(bias)})[0]
		case "gelu_new", "gelu_pytorch_tanh": // FastGelu is exactly this tanh formula
			return e.msOp("FastGelu", 1, []int{0}, []string{e.product(x, weight), e.weight(bias)})[0]
		}
	}
	return e.act(e.affine(x, weight, bias, true))
}

// act applies hidden_act in the forms ORT fuses: x/√2 through Erf (Gelu),
// the tanh approximation (FastGelu), Relu.
func (e *encoder) act(x string) string {
	switch e.cfg.HiddenAct {
	case "gelu":
		erf := e.op("Erf", []string{e.op("Div", []string{x, e.scalarFloat(float32(math.Sqrt2))})})
		return e.op("Mul", []string{e.op("Mul", []string{x, e.op("Add", []string{erf, e.scalarFloat(1)})}), e.scalarFloat(0.5)})
	case "gelu_new", "gelu_pytorch_tanh":
		cube := e.op("Mul", []string{e.op("Mul", []string{x, x}), x})
		inner := e.op("Add", []string{x, e.op("Mul", []string{cube, e.scalarFloat(0.044715)})})
		th := e.op("Tanh", []string{e.op("Mul", []string{inner, e.scalarFloat(float32(math.Sqrt(2 / math.Pi)))})})
		return e.op("Mul", []string{e.op("Mul", []string{x, e.op("Add", []string{th, e.scalarFloat(1)})}), e.scalarFloat(0.5)})
	case "relu":
		return e.op("Relu", []string{x})
	}
	panic("onnx: hidden_act " + e.cfg.HiddenAct + " passed Validate") // Validate lists the same names
}

// classifier appends the head on each row's first token and the logits
// output: XLM-R's classifier.dense + tanh + out_proj, or BERT's pooler
// (dense + tanh) + classifier; two labels become label 1 minus label 0.
func (e *encoder) classifier(x string) {
	e.scope = "head"
	h := int64(e.cfg.HiddenSize)
	first := e.op("Gather", []string{e.op("Reshape", []string{x, e.shapeBS(h)}), e.scalarInt(0)}, attrInt("axis", 1)) // [B,H]
	dense, bias, out, outB := arch.EncPoolerWeight, arch.EncPoolerBias, arch.EncClassifierW, arch.EncClassifierBias
	if e.cfg.Family() == arch.FamilyXLMR {
		dense, bias, out, outB = arch.EncHeadDenseWeight, arch.EncHeadDenseBias, arch.EncHeadOutWeight, arch.EncHeadOutBias
	}
	f := e.op("Tanh", []string{e.affine(first, dense, bias, false)})
	logits := e.affine(f, out, outB, false) // [B, labels]
	if e.cfg.NumLabels() == 2 {
		logits = e.op("MatMul", []string{logits, e.floatInit("rerankd.label_diff", []int{2, 1}, []float32{-1, 1})})
	}
	e.opTo(OutputLogits, "Reshape", []string{logits, e.ints(-1)})
	e.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch")
}

// EncoderWeights reads back the architecture and weights of a graph built
// by BuildEncoder, for the reference engine: the same numbers as the graph.
func (m *Model) EncoderWeights() (*arch.EncoderWeights, error) {
	cfg, err := m.EncoderConfig()
	if err != nil {
		return nil, err
	}
	tensors, err := readTensors(m.initializers(), cfg.Shapes())
	if err != nil {
		return nil, err
	}
	w := &arch.EncoderWeights{Config: cfg, Tensors: tensors}
	if err := w.Check(); err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return w, nil
}

// fieldModelMetadata is ModelProto.metadata_props.
const fieldModelMetadata = 14

// ReadMeta reads the metadata_props of the model file at path without
// decoding its graph or weights.
func ReadMeta(path string) (map[string]string, error) {
	raw, release, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	defer release()
	meta := map[string]string{}
	err = eachField(raw, func(num protowire.Number, b []byte) error {
		if num != fieldModelMetadata {
			return nil
		}
		e := &onnxpb.StringStringEntryProto{}
		if err := proto.Unmarshal(b, e); err != nil {
			return err
		}
		meta[e.GetKey()] = e.GetValue()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return meta, nil
}

// ReadEncoderConfig returns the architecture recorded in an encoder graph
// file written by BuildEncoder (MetaEncoderConfig), validated.
func ReadEncoderConfig(path string) (arch.EncoderConfig, error) {
	meta, err := ReadMeta(path)
	if err != nil {
		return arch.EncoderConfig{}, err
	}
	return encoderConfigOf(meta[MetaEncoderConfig])
}

// EncoderConfig returns the architecture recorded in m's metadata.
func (m *Model) EncoderConfig() (arch.EncoderConfig, error) {
	s, _ := m.Meta(MetaEncoderConfig)
	return encoderConfigOf(s)
}

func encoderConfigOf(s string) (arch.EncoderConfig, error) {
	if s == "" {
		return arch.EncoderConfig{}, errors.New("onnx: no " + MetaEncoderConfig + " metadata (not an encoder written by rerankd)")
	}
	var c arch.EncoderConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return arch.EncoderConfig{}, fmt.Errorf("onnx: %s metadata: %w", MetaEncoderConfig, err)
	}
	if err := c.Validate(); err != nil {
		return arch.EncoderConfig{}, fmt.Errorf("onnx: %s metadata: %w", MetaEncoderConfig, err)
	}
	return c, nil
}
