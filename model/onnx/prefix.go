package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Shared-prefix graph: every pair of a rerank request is
// prefix(system prompt + instruction + query) + document + suffix, so the
// prefix's keys and values are the same for all of them. This graph takes
// the prefix once and the continuations (document + suffix) of a whole
// batch, and computes the prefix's K/V in the same pass that uses them:
//
//   - the residual stream is packed, [prefix + real continuation tokens,
//     hidden], with no padding rows, so every projection (the Gemms, ~95%
//     of the FLOPs) costs exactly the tokens that must be computed: the
//     prefix once, each continuation once;
//   - only attention works on the padded [batch, seq] layout: each layer
//     gathers the continuation rows into it, scores every continuation query
//     against the prefix keys (broadcast over the batch by MatMul, no copy)
//     and its own row's earlier keys, and scatters the result back.
//
// One graph instead of a prefix graph plus a continuation graph means one
// ONNX Runtime session: two sessions over the same weights would each keep
// their own prepacked copy (measured: 2x resident memory), and disabling
// prepacking to share a memory-mapped file costs speed. No K/V tensor
// crosses the ORT boundary either.
//
// Numerically it is the plain graph's computation (same RoPE positions, same
// softmax over the same keys), so scores agree with model.onnx to float32
// rounding (tests: 1e-5).

// Shared-prefix graph inputs (the output is OutputLogits, float32 [batch]).
const (
	// PrefixIDs is int64 [prefix]: the tokens every row starts with, at
	// positions 0..prefix-1. May be empty.
	PrefixIDs = "prefix_ids"
	// PackedIDs is int64 [tokens]: each row's continuation tokens, rows one
	// after the other, no padding (tokens = sum(attention_mask)).
	PackedIDs = "input_ids"
	// PackedMask is int64 [batch, seq]: row b has sum(mask[b]) >= 1
	// continuation tokens, right-padded; it gives the layout of PackedIDs.
	PackedMask = "attention_mask"
)

// SharedPrefixFile is the shared-prefix graph's file name in a model folder,
// next to ModelFile (whose data file it shares).
const SharedPrefixFile = "shared_prefix.onnx"

// MetaVariant names the graph variant in the metadata ("shared_prefix");
// the plain graph has none.
const (
	MetaVariant         = "rerankd.variant"
	VariantSharedPrefix = "shared_prefix"
)

// prefixDecoder builds the shared-prefix graph on decoder's helpers
// (weight, rmsNorm, linear, rope); rope reads d.cos/d.sin, which here are
// per packed row, [rows, 1, head_dim].
type prefixDecoder struct {
	*decoder
	p1, t1, b1, s1 string // prefix, token, batch and seq sizes as 1-element vectors
	splitRows      string // [prefix, tokens]: Split sizes of the packed stream
	splitKeys      string // [prefix, seq]: Split sizes of a continuation's keys
	padIndex       string // [batch*seq]: packed continuation row of each slot (padding: any valid row)
	unpadIndex     string // [tokens]: slot b*seq+j of each packed continuation token
	prefixMask     string // additive [prefix, prefix], causal
	contMask       string // additive [batch, 1, 1, seq, seq]: causal within the row, padding masked
	lastRow        string // [batch]: row of each sequence's last token in the packed stream
}

// BuildSharedPrefix writes the shared-prefix variant of w's reranker (see
// above). Only the HeadLogit output is supported.
func BuildSharedPrefix(w *arch.Weights, opts Options) (*Model, error) {
	if w == nil {
		return nil, errors.New("onnx: nil weights")
	}
	var errs []error
	if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if opts.Head != HeadLogit {
		errs = append(errs, fmt.Errorf("shared-prefix graph supports head %v only, not %v", HeadLogit, opts.Head))
	}
	if err := w.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("onnx: build shared prefix: %w", err)
	}
	c := w.Config
	d := &prefixDecoder{decoder: &decoder{graph: newGraph(), cfg: c, w: w, shapes: map[string]string{}, quant: opts.Quant}}
	pids := d.input(PrefixIDs, onnxpb.TensorProto_INT64, "prefix")
	ids := d.input(PackedIDs, onnxpb.TensorProto_INT64, "tokens")
	mask := d.input(PackedMask, onnxpb.TensorProto_INT64, "batch", "seq")
	d.prologue(pids, ids, mask)

	d.scope = "embed"
	embed, err := d.weight(arch.EmbedTokens)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	all := d.op("Concat", []string{pids, ids}, attrInt("axis", 0))
	h := d.op("Gather", []string{embed, all}, attrInt("axis", 0)) // [prefix+tokens, hidden]
	for l := range c.NumHiddenLayers {
		if h, err = d.layer(l, h); err != nil {
			return nil, fmt.Errorf("onnx: layer %d: %w", l, err)
		}
	}
	d.scope = "head"
	norm, err := d.weight(arch.FinalNorm)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	diff, err := w.HeadDiff(opts.YesID, opts.NoID)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	last := d.rmsNorm(d.op("Gather", []string{h, d.lastRow}, attrInt("axis", 0)), norm) // [batch, hidden]
	d.opTo(OutputLogits, "MatMul", []string{last, d.floatInit(HeadDiffName, []int{c.HiddenSize}, diff)})
	d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch")

	cfgJSON, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("onnx: config: %w", err)
	}
	doc := fmt.Sprintf("Qwen3 reranker (%d layers, hidden %d), shared-prefix variant, yes/no ids %d/%d. "+
		"Inputs: prefix_ids [prefix], input_ids [tokens] (packed continuations), attention_mask [batch, seq]; "+
		"see github.com/rerankd/rerankd/model/onnx.", c.NumHiddenLayers, c.HiddenSize, opts.YesID, opts.NoID)
	m := newModel(d.graph, "rerankd_reranker_shared_prefix", doc, opts.Storage)
	m.setMeta(MetaConfig, string(cfgJSON))
	m.setMeta(MetaHead, opts.Head.String())
	m.setMeta(MetaYesID, strconv.Itoa(opts.YesID))
	m.setMeta(MetaNoID, strconv.Itoa(opts.NoID))
	if opts.Quant != QuantNone {
		m.setMeta(MetaQuant, opts.Quant.String())
	}
	m.setMeta(MetaVariant, VariantSharedPrefix)
	return m, nil
}

// prologue derives sizes, packing indices, RoPE tables and masks from the
// inputs. The continuation layout comes from the mask alone: packed tokens
// are the mask's ones in row-major order, so NonZero gives each token's
// slot and a running count gives each slot's token.
func (d *prefixDecoder) prologue(pids, ids, mask string) {
	d.scope = "prologue"
	zero, one := d.scalarInt(0), d.scalarInt(1)
	first := func(x string) string {
		return d.op("Gather", []string{d.op("Shape", []string{x}), zero}, attrInt("axis", 0))
	}
	p := first(pids)
	shp := d.op("Shape", []string{mask})
	batch := d.op("Gather", []string{shp, zero}, attrInt("axis", 0))
	seq := d.op("Gather", []string{shp, one}, attrInt("axis", 0))
	d.p1 = d.op("Unsqueeze", []string{p, d.ints(0)})
	d.t1 = d.op("Shape", []string{ids})
	d.b1 = d.op("Unsqueeze", []string{batch, d.ints(0)})
	d.s1 = d.op("Unsqueeze", []string{seq, d.ints(0)})
	d.splitRows = d.op("Concat", []string{d.p1, d.t1}, attrInt("axis", 0))
	d.splitKeys = d.op("Concat", []string{d.p1, d.s1}, attrInt("axis", 0))

	flat := d.op("Reshape", []string{mask, d.ints(-1)}) // [batch*seq]
	isReal := d.op("Cast", []string{flat}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	d.unpadIndex = d.op("Reshape", []string{d.op("NonZero", []string{isReal}), d.ints(-1)})
	count := d.op("CumSum", []string{flat, zero})
	d.padIndex = d.op("Max", []string{d.op("Sub", []string{count, one}), zero})

	// Positions: the prefix at 0..P-1, continuation token j of its row at P+j.
	posP := d.op("Range", []string{zero, p, one})
	posC := d.op("Add", []string{d.op("Mod", []string{d.unpadIndex, seq}), p})
	pos := d.op("Concat", []string{posP, posC}, attrInt("axis", 0)) // [rows]
	d.ropeTables(pos)

	// Prefix: causal. Continuation: causal within its row and only real
	// keys; the prefix keys are all real and all earlier, so unmasked.
	d.prefixMask = d.causalMask(posP)
	s := d.op("Range", []string{zero, seq, one})
	row := d.op("Unsqueeze", []string{s, d.ints(1)})
	col := d.op("Unsqueeze", []string{s, d.ints(0)})
	causal := d.op("LessOrEqual", []string{col, row}) // [seq, seq]
	keyOK := d.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	keyOK = d.op("Unsqueeze", []string{keyOK, d.ints(1)}) // [batch, 1, seq]
	add := d.op("Where", []string{d.op("And", []string{causal, keyOK}), d.scalarFloat(0), d.scalarFloat(maskValue)})
	d.contMask = d.op("Unsqueeze", []string{add, d.ints(1, 2)})

	// Last real token of row b: slot b*seq + len_b - 1, packed row
	// padIndex[slot], after the prefix's rows.
	lens := d.op("ReduceSum", []string{mask, d.ints(1)}, attrInt("keepdims", 0))
	rows := d.op("Range", []string{zero, batch, one})
	slot := d.op("Add", []string{d.op("Mul", []string{rows, seq}), d.op("Sub", []string{lens, one})})
	d.lastRow = d.op("Add", []string{d.op("Gather", []string{d.padIndex, slot}, attrInt("axis", 0)), p})
}

// ropeTables sets d.cos/d.sin to [rows, 1, head_dim] for positions pos
// [rows], computed as the plain graph's prologue does.
func (d *prefixDecoder) ropeTables(pos string) {
	hd := d.cfg.HeadDim
	inv := make([]float32, hd/2)
	for i := range inv {
		inv[i] = float32(math.Pow(d.cfg.RopeTheta, -float64(2*i)/float64(hd)))
	}
	invFreq := d.floatInit("rope.inv_freq", []int{hd / 2}, inv)
	posF := d.op("Cast", []string{pos}, attrInt("to", int64(onnxpb.TensorProto_FLOAT)))
	ang := d.op("Mul", []string{d.op("Unsqueeze", []string{posF, d.ints(1)}), invFreq}) // [rows, hd/2]
	c, s := d.op("Cos", []string{ang}), d.op("Sin", []string{ang})
	cos := d.op("Concat", []string{c, c}, attrInt("axis", -1))
	sin := d.op("Concat", []string{d.op("Neg", []string{s}), s}, attrInt("axis", -1))
	d.cos = d.op("Unsqueeze", []string{cos, d.ints(1)})
	d.sin = d.op("Unsqueeze", []string{sin, d.ints(1)})
}

// causalMask returns the additive [n, n] mask letting position i see j <= i.
func (d *prefixDecoder) causalMask(pos string) string {
	row := d.op("Unsqueeze", []string{pos, d.ints(1)})
	col := d.op("Unsqueeze", []string{pos, d.ints(0)})
	return d.op("Where", []string{d.op("LessOrEqual", []string{col, row}), d.scalarFloat(0), d.scalarFloat(maskValue)})
}

// layer appends decoder block l to the packed stream h [prefix+tokens, hidden].
func (d *prefixDecoder) layer(l int, h string) (string, error) {
	c := d.cfg
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", err
	}
	nh, nkv, hd := int64(c.NumAttentionHeads), int64(c.NumKeyValueHeads), int64(c.HeadDim)
	group := nh / nkv

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	a := d.rmsNorm(h, ws[arch.InputNorm])
	q := d.op("Reshape", []string{d.proj(a, ws[arch.QProj]), d.ints(-1, nh, hd)})
	q = d.rope(d.rmsNorm(q, ws[arch.QNorm]))
	q = d.op("Mul", []string{q, d.scalarFloat(float32(1 / math.Sqrt(float64(hd))))})
	k := d.op("Reshape", []string{d.proj(a, ws[arch.KProj]), d.ints(-1, nkv, hd)})
	k = d.rope(d.rmsNorm(k, ws[arch.KNorm]))
	v := d.op("Reshape", []string{d.proj(a, ws[arch.VProj]), d.ints(-1, nkv, hd)})
	split := func(x string) (string, string) {
		o := d.opN("Split", 2, []string{x, d.splitRows}, attrInt("axis", 0))
		return o[0], o[1]
	}
	qp, qc := split(q)
	kp, kc := split(k)
	vp, vc := split(v)

	// Prefix (one sequence): q [nkv,group,P,hd], kᵀ [nkv,1,hd,P], v [nkv,1,P,hd].
	// Query head kvh*group+j uses kv head kvh, as in repeat_kv.
	qp = d.op("Transpose", []string{d.op("Reshape", []string{qp, d.ints(-1, nkv, group, hd)})}, attrInts("perm", 1, 2, 0, 3))
	kpT := d.op("Transpose", []string{d.op("Reshape", []string{kp, d.ints(-1, nkv, 1, hd)})}, attrInts("perm", 1, 2, 3, 0))
	vp = d.op("Transpose", []string{d.op("Reshape", []string{vp, d.ints(-1, nkv, 1, hd)})}, attrInts("perm", 1, 2, 0, 3))
	pp := d.op("Softmax", []string{d.op("Add", []string{d.op("MatMul", []string{qp, kpT}), d.prefixMask})}, attrInt("axis", -1))
	op := d.op("MatMul", []string{pp, vp})                             // [nkv,group,P,hd]
	op = d.op("Transpose", []string{op}, attrInts("perm", 2, 0, 1, 3)) // [P,nkv,group,hd]
	op = d.op("Reshape", []string{op, d.ints(-1, nh*hd)})              // [P, nh*hd]

	// Continuations, padded: q [B,nkv,group,S,hd], kᵀ [B,nkv,1,hd,S], v [B,nkv,1,S,hd].
	pad := func(x string, heads, grp int64, perm ...int64) string {
		x = d.op("Gather", []string{x, d.padIndex}, attrInt("axis", 0)) // [B*S, heads, hd]
		shape := d.op("Concat", []string{d.b1, d.s1, d.ints(heads, grp, hd)}, attrInt("axis", 0))
		return d.op("Transpose", []string{d.op("Reshape", []string{x, shape})}, attrInts("perm", perm...))
	}
	qc = pad(qc, nkv, group, 0, 2, 3, 1, 4)
	kcT := pad(kc, nkv, 1, 0, 2, 3, 4, 1)
	vc = pad(vc, nkv, 1, 0, 2, 3, 1, 4)
	past := d.op("MatMul", []string{qc, kpT})                                   // [B,nkv,group,S,P]
	cur := d.op("Add", []string{d.op("MatMul", []string{qc, kcT}), d.contMask}) // [B,nkv,group,S,S]
	pr := d.op("Softmax", []string{d.op("Concat", []string{past, cur}, attrInt("axis", -1))}, attrInt("axis", -1))
	parts := d.opN("Split", 2, []string{pr, d.splitKeys}, attrInt("axis", -1))
	oc := d.op("Add", []string{d.op("MatMul", []string{parts[0], vp}), d.op("MatMul", []string{parts[1], vc})})
	oc = d.op("Transpose", []string{oc}, attrInts("perm", 0, 3, 1, 2, 4)) // [B,S,nkv,group,hd]
	oc = d.op("Reshape", []string{oc, d.ints(-1, nh*hd)})                 // [B*S, nh*hd]
	oc = d.op("Gather", []string{oc, d.unpadIndex}, attrInt("axis", 0))   // [tokens, nh*hd]
	o := d.op("Concat", []string{op, oc}, attrInt("axis", 0))
	h = d.op("Add", []string{h, d.proj(o, ws[arch.OProj])})

	d.scope = fmt.Sprintf("layers.%d/mlp", l)
	m := d.rmsNorm(h, ws[arch.PostNorm])
	gate := d.proj(m, ws[arch.GateProj])
	act := d.op("Mul", []string{gate, d.op("Sigmoid", []string{gate})}) // silu
	act = d.op("Mul", []string{act, d.proj(m, ws[arch.UpProj])})
	return d.op("Add", []string{h, d.proj(act, ws[arch.DownProj])}), nil
}
