package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

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
)

// EncoderOptions configure BuildEncoder.
type EncoderOptions struct {
	// Storage decides how Save lays the weights out on disk.
	Storage Storage
	// Quant selects how the layers' projections are stored (QuantNone:
	// float32 Gemm). Embeddings, LayerNorms, biases and heads stay float32.
	Quant Quant
}

// NewEncoderOptions returns the defaults: float32, default storage.
func NewEncoderOptions() EncoderOptions { return EncoderOptions{Storage: DefaultStorage()} }

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
	batch1, seq1 string // 1-element batch and sequence sizes
	mask         string // additive key mask [batch, 1, 1, seq]
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
	e := &encoder{graph: newGraph(), cfg: c, w: w, quant: opts.Quant}
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

	keyOK := e.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	add := e.op("Where", []string{keyOK, e.scalarFloat(0), e.scalarFloat(maskValue)}) // [B,S]
	e.mask = e.op("Unsqueeze", []string{add, e.ints(1, 2)})                           // [B,1,1,S]
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
		t := e.w.Tensors[weight]
		return e.op("Add", []string{e.quantLinear(x, weight, t.Shape, t.Data, q), e.weight(bias)})
	}
	return e.op("Gemm", []string{x, e.weight(weight), e.weight(bias)}, attrInt("transB", 1))
}

// layer appends encoder block l to x [batch*seq, hidden].
func (e *encoder) layer(l int, x string) string {
	t := func(name string) string { return arch.EncoderLayerTensor(l, name) }
	nh, hd := int64(e.cfg.NumAttentionHeads), int64(e.cfg.HeadDim())
	e.scope = fmt.Sprintf("layer.%d/attention", l)
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
	o = e.op("Reshape", []string{o, e.ints(-1, nh*hd)})
	a := e.affine(o, t(arch.EncAttnOut), t(arch.EncAttnOutB), true)
	x = e.layerNorm(e.op("Add", []string{a, x}), t(arch.EncAttnNormW), t(arch.EncAttnNormB))

	e.scope = fmt.Sprintf("layer.%d/mlp", l)
	m := e.act(e.affine(x, t(arch.EncInter), t(arch.EncInterBias), true))
	f := e.affine(m, t(arch.EncOut), t(arch.EncOutBias), true)
	return e.layerNorm(e.op("Add", []string{f, x}), t(arch.EncOutNormW), t(arch.EncOutNormB))
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
