package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
//     against the prefix keys (one MatMul per kv head over all rows, no
//     copy of the prefix per row) and its own row's earlier keys, and
//     scatters the result back; the batch's rows are split into
//     Options.AttentionBuckets runs, each padded to its own longest row
//     (the engine passes rows longest first);
//   - the last layer runs only what the score needs: keys and values of
//     every token (the last token attends to them), but queries, attention,
//     output projection and MLP for each row's last token alone (~3% of a
//     request's FLOPs at 20 documents).
//
// Keys and values of tokens before the prefix can come in (PastKey,
// PastValue) and the prefix's come out (PresentKey, PresentValue), so a
// caller can keep the system prompt and instruction across requests
// (model.PrefixSession's cache). K/V cross the ORT boundary only there: one
// graph instead of separate prefix and continuation graphs means one ONNX
// Runtime session, since two sessions over the same weights would each keep
// their own prepacked copy (measured: 2x resident memory), and disabling
// prepacking to share a memory-mapped file costs speed.
//
// Numerically it is the plain graph's computation (same RoPE positions, same
// softmax over the same keys), so scores agree with model.onnx to float32
// rounding (tests: 1e-5).

// Shared-prefix graph inputs and outputs (OutputLogits is float32 [batch]).
const (
	// PrefixIDs is int64 [prefix]: the tokens every row starts with after
	// the past ones, at positions past..past+prefix-1. At least one: ONNX
	// Runtime 1.30 crashes (SIGFPE) on an empty one.
	PrefixIDs = "prefix_ids"
	// PackedIDs is int64 [tokens]: each row's continuation tokens, rows one
	// after the other, no padding (tokens = sum(attention_mask)).
	PackedIDs = "input_ids"
	// PackedMask is int64 [batch, seq]: row b has sum(mask[b]) >= 1
	// continuation tokens, right-padded; it gives the layout of PackedIDs.
	PackedMask = "attention_mask"
	// PastKey and PastValue are float32 [layers, kv_heads, past, head_dim]:
	// the keys (after k_norm and RoPE) and values of tokens that precede
	// prefix_ids, from an earlier call's PresentKey/PresentValue (past may
	// be 0). They let a caller keep a system prompt's and instruction's
	// K/V across requests.
	PastKey   = "past_key"
	PastValue = "past_value"
	// PresentKey and PresentValue are float32 [layers, kv_heads,
	// past+prefix, head_dim]: the past and prefix tokens' K/V, for the
	// next call's PastKey/PastValue.
	PresentKey   = "present_key"
	PresentValue = "present_value"
)

// SharedPrefixFile is the shared-prefix graph's file name in a model folder,
// next to ModelFile (whose data file it shares).
const SharedPrefixFile = "shared_prefix.onnx"

// AttentionFormFile names the FuseAttention form of a shared-prefix graph
// file (SharedPrefixFile or a QuantFile of it) written beside it:
// "shared_prefix.attn.onnx", "shared_prefix.int8.attn.onnx". The CPU
// engine runs it where a folder has it; other execution providers run the
// standard-op form, because ONNX Runtime's CUDA Attention kernel refuses
// grouped-query heads in releases whose source was read (Qwen3's are).
func AttentionFormFile(name string) string {
	return strings.TrimSuffix(name, ".onnx") + ".attn.onnx"
}

// MetaVariant names the graph variant in the metadata ("shared_prefix");
// the plain graph has none.
const (
	MetaVariant         = "rerankd.variant"
	VariantSharedPrefix = "shared_prefix"
)

// prefixDecoder builds the shared-prefix graph on decoder's helpers
// (weight, addNorm, proj, rope); d.at is RoPE per packed row.
type prefixDecoder struct {
	*decoder
	pastK, pastV   string       // graph inputs [layers, nkv, past, hd]
	p1, pv, b1, s1 string       // prefix, past+prefix, batch and seq sizes as 1-element vectors
	splitKeys      string       // [past+prefix, seq]: Split sizes of a continuation's keys
	padIndex       string       // [batch*seq]: packed continuation row of each slot (padding: any valid row)
	padAll         string       // padIndex + prefix: the same slots\' rows in the whole packed stream (prefix rows first)
	unpadIndex     string       // [tokens]: slot b*seq+j of each packed continuation token
	prefixMask     string       // additive [prefix, past+prefix], causal
	contMask       string       // additive [batch, 1, 1, seq, seq]: causal within the row, padding masked
	lastMask       string       // additive [batch, 1, 1, 1, seq]: a row's real keys
	buckets        []attnBucket // the continuations' attention, by bucket of rows
	unpadBuckets   string       // [tokens]: slot of each packed continuation token in the buckets' outputs, concatenated
	unpadAll       string       // [prefix+tokens]: row of each packed row (the prefix\'s, then each token\'s) in the prefix\'s attention output followed by the buckets\'
	attnBuckets    int          // Options.AttentionBuckets
	lastRow        string       // [batch]: row of each sequence's last token in the packed stream
	lastAt         ropeAt       // RoPE at the last tokens (rows [batch])
	presentK       []string     // per layer [1, nkv, past+prefix, hd]
	presentV       []string
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
	w, renamed, err := prepareWeights(w, opts)
	if err != nil {
		return nil, fmt.Errorf("onnx: build shared prefix: %w", err)
	}
	d := &prefixDecoder{decoder: &decoder{graph: newGraph(), cfg: c, w: w, shapes: map[string]string{}, quant: opts.Quant, fuse: opts.Fusion, renamed: renamed},
		attnBuckets: opts.AttentionBuckets}
	pids := d.input(PrefixIDs, onnxpb.TensorProto_INT64, "prefix")
	ids := d.input(PackedIDs, onnxpb.TensorProto_INT64, "tokens")
	mask := d.input(PackedMask, onnxpb.TensorProto_INT64, "batch", "seq")
	d.pastK = d.input(PastKey, onnxpb.TensorProto_FLOAT, c.NumHiddenLayers, c.NumKeyValueHeads, "past", c.HeadDim)
	d.pastV = d.input(PastValue, onnxpb.TensorProto_FLOAT, c.NumHiddenLayers, c.NumKeyValueHeads, "past", c.HeadDim)
	d.prologue(pids, ids, mask)

	d.scope = "embed"
	embed, err := d.weight(arch.EmbedTokens)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	all := d.op("Concat", []string{pids, ids}, attrInt("axis", 0))
	h := d.op("Gather", []string{embed, all}, attrInt("axis", 0)) // [prefix+tokens, hidden]
	delta := ""
	for l := range c.NumHiddenLayers - 1 {
		if h, delta, err = d.layer(l, h, delta); err != nil {
			return nil, fmt.Errorf("onnx: layer %d: %w", l, err)
		}
	}
	last, lastDelta, err := d.lastLayer(c.NumHiddenLayers-1, h, delta) // [batch, hidden] each
	if err != nil {
		return nil, fmt.Errorf("onnx: layer %d: %w", c.NumHiddenLayers-1, err)
	}
	d.scope = "head"
	norm, err := d.weight(arch.FinalNorm)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	diff, err := w.ScoreVector(opts.YesID, opts.NoID)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	normed, _ := d.addNorm(last, lastDelta, norm)
	d.opTo(OutputLogits, "MatMul", []string{normed, d.floatInit(HeadDiffName, []int{c.HiddenSize}, diff)})
	d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch")
	d.opTo(PresentKey, "Concat", d.presentK, attrInt("axis", 0))
	d.opTo(PresentValue, "Concat", d.presentV, attrInt("axis", 0))
	d.output(PresentKey, onnxpb.TensorProto_FLOAT, c.NumHiddenLayers, c.NumKeyValueHeads, "present", c.HeadDim)
	d.output(PresentValue, onnxpb.TensorProto_FLOAT, c.NumHiddenLayers, c.NumKeyValueHeads, "present", c.HeadDim)

	cfgJSON, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("onnx: config: %w", err)
	}
	doc := fmt.Sprintf("%s reranker (%d layers, hidden %d), shared-prefix variant, yes/no ids %d/%d. "+
		"Inputs: prefix_ids [prefix], input_ids [tokens] (packed continuations), attention_mask [batch, seq], "+
		"past_key/past_value [layers, kv_heads, past, head_dim]; outputs logits [batch], present_key/present_value; "+
		"see github.com/rerankd/rerankd/model/onnx.", familyTitle(c), c.NumHiddenLayers, c.HiddenSize, opts.YesID, opts.NoID)
	m := newModel(d.graph, "rerankd_reranker_shared_prefix", doc, opts.Storage)
	m.setMeta(MetaConfig, string(cfgJSON))
	m.setMeta(MetaHead, opts.Head.String())
	m.setMeta(MetaYesID, strconv.Itoa(opts.YesID))
	m.setMeta(MetaNoID, strconv.Itoa(opts.NoID))
	setQuantMeta(m, opts)
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
	dim := func(x string, i int64) string {
		return d.op("Gather", []string{d.op("Shape", []string{x}), d.scalarInt(i)}, attrInt("axis", 0))
	}
	p1 := dim(pids, 0)
	past := dim(d.pastK, 2)
	p := d.op("Add", []string{past, p1}) // keys before any continuation
	batch, seq := dim(mask, 0), dim(mask, 1)
	d.p1 = d.op("Unsqueeze", []string{p1, d.ints(0)})
	d.b1 = d.op("Unsqueeze", []string{batch, d.ints(0)})
	d.s1 = d.op("Unsqueeze", []string{seq, d.ints(0)})
	d.pv = d.op("Unsqueeze", []string{p, d.ints(0)})
	d.splitKeys = d.op("Concat", []string{d.pv, d.s1}, attrInt("axis", 0))

	flat := d.op("Reshape", []string{mask, d.ints(-1)}) // [batch*seq]
	isReal := d.op("Cast", []string{flat}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	d.unpadIndex = d.op("Reshape", []string{d.op("NonZero", []string{isReal}), d.ints(-1)})
	count := d.op("CumSum", []string{flat, zero})
	d.padIndex = d.op("Max", []string{d.op("Sub", []string{count, one}), zero})
	d.padAll = d.op("Add", []string{d.padIndex, p1})

	// Positions: the prefix at past..P-1, continuation token j of its row
	// at P+j.
	posP := d.op("Range", []string{past, p, one})
	posC := d.op("Add", []string{d.op("Mod", []string{d.unpadIndex, seq}), p})
	pos := d.op("Concat", []string{posP, posC}, attrInt("axis", 0)) // [rows]
	d.ropeTables(pos)

	// Prefix: causal over past and prefix keys. Continuation: causal within
	// its row and only real keys; the past and prefix keys are all real and
	// all earlier, so unmasked.
	keys := d.op("Unsqueeze", []string{d.op("Range", []string{zero, p, one}), d.ints(0)}) // [1, P]
	d.prefixMask = d.op("Where", []string{
		d.op("LessOrEqual", []string{keys, d.op("Unsqueeze", []string{posP, d.ints(1)})}),
		d.scalarFloat(0), d.scalarFloat(maskValue)})
	s := d.op("Range", []string{zero, seq, one})
	row := d.op("Unsqueeze", []string{s, d.ints(1)})
	col := d.op("Unsqueeze", []string{s, d.ints(0)})
	causal := d.op("LessOrEqual", []string{col, row}) // [seq, seq]
	keyOK := d.op("Cast", []string{mask}, attrInt("to", int64(onnxpb.TensorProto_BOOL)))
	keyOK = d.op("Unsqueeze", []string{keyOK, d.ints(1)}) // [batch, 1, seq]
	add := d.op("Where", []string{d.op("And", []string{causal, keyOK}), d.scalarFloat(0), d.scalarFloat(maskValue)})
	d.contMask = d.op("Unsqueeze", []string{add, d.ints(1, 2)})
	// The last token of a row sees all of its row's real keys.
	d.lastMask = d.op("Unsqueeze", []string{
		d.op("Where", []string{keyOK, d.scalarFloat(0), d.scalarFloat(maskValue)}), d.ints(1, 2)}) // [batch,1,1,1,seq]

	// Last real token of row b: slot b*seq + len_b - 1, packed row
	// padIndex[slot], after the prefix's rows.
	lens := d.op("ReduceSum", []string{mask, d.ints(1)}, attrInt("keepdims", 0))
	d.bucketRows(lens, add, p1)
	d.unpadAll = d.op("Concat", []string{d.op("Range", []string{zero, p1, one}), d.op("Add", []string{d.unpadBuckets, p1})}, attrInt("axis", 0))
	rows := d.op("Range", []string{zero, batch, one})
	slot := d.op("Add", []string{d.op("Mul", []string{rows, seq}), d.op("Sub", []string{lens, one})})
	d.lastRow = d.op("Add", []string{d.op("Gather", []string{d.padIndex, slot}, attrInt("axis", 0)), p1})
	if d.fuse&FuseRotary != 0 {
		d.lastAt = d.at
		d.lastAt.pos = d.op("Unsqueeze", []string{d.op("Gather", []string{pos, d.lastRow}, attrInt("axis", 0)), d.ints(1)})
	} else {
		d.lastAt = ropeAt{cos: d.op("Gather", []string{d.at.cos, d.lastRow}, attrInt("axis", 0)),
			sin: d.op("Gather", []string{d.at.sin, d.lastRow}, attrInt("axis", 0))}
	}
}

// ropeTables sets d.at for the packed rows at positions pos [rows]: as the
// plain graph's prologue computes them, cos/sin [rows, 1, head_dim],
// or with FuseRotary the constant tables and pos as RotaryEmbedding's
// position ids [rows, 1].
func (d *prefixDecoder) ropeTables(pos string) {
	hd := d.cfg.HeadDim
	if d.fuse&FuseRotary != 0 {
		// Each row is its own one-token sequence, [rows, 1, heads*hd] with
		// position ids [rows, 1]: RotaryEmbedding refuses a sequence longer
		// than its tables, and a batch's packed rows can outnumber the
		// model's positions.
		d.ropeCache()
		d.at = ropeAt{pos: d.op("Unsqueeze", []string{pos, d.ints(1)}),
			flat: func(heads int64) string { return d.ints(-1, 1, heads*int64(hd)) },
			back: func(heads int64) string { return d.ints(-1, heads, int64(hd)) }}
		return
	}
	d.at = d.ropeComputed(pos)
}

// attnBucket is a run of the batch's rows whose continuation attention is
// computed padded to its own longest row, not the batch's: with rows in
// decreasing length (model.PrefixSession's order), the shorter rows pay
// for their own width. Names as prefixDecoder's fields.
type attnBucket struct {
	b1, s1    string // its rows and width as 1-element vectors
	padIndex  string // [b*s]: row of each slot in the whole packed stream
	contMask  string // additive [b, 1, 1, s, s]
	splitKeys string // [P, s]
	fusedMask string // FuseAttention's [b, 1, s, P+s] (prefixDecoder.fusedMask), "" until built
}

// bucketRows splits the batch into d.attnBuckets buckets of consecutive
// rows: bucket h holds rows ceil(h*B/k) .. ceil((h+1)*B/k)-1, so row b is
// in bucket floor(b*k/B). With fewer rows than buckets some would be empty
// (which ONNX Runtime does not always survive): such a bucket holds one row
// of another bucket instead, computed again and not used. lens [B] are the rows' lengths
// and mask [B, S, S] the additive continuation mask.
func (d *prefixDecoder) bucketRows(lens, mask, p1 string) {
	zero, one := d.scalarInt(0), d.scalarInt(1)
	k := int64(max(d.attnBuckets, 1))
	if k == 1 {
		d.buckets = []attnBucket{d.fullBatch()}
		d.unpadBuckets = d.unpadIndex
		return
	}
	batch := d.op("Squeeze", []string{d.b1, d.ints(0)})
	seq := d.op("Squeeze", []string{d.s1, d.ints(0)})
	last := d.op("Sub", []string{batch, one})
	ceilDiv := func(num string) string { // ceil(num / k), num >= 0
		return d.op("Div", []string{d.op("Add", []string{num, d.scalarInt(k - 1)}), d.scalarInt(k)})
	}
	grid := d.op("Reshape", []string{d.padIndex, d.op("Concat", []string{d.b1, d.s1}, attrInt("axis", 0))}) // [B, S]
	var starts, widths, offsets []string
	offset := zero
	for h := range k {
		start := d.op("Min", []string{ceilDiv(d.op("Mul", []string{batch, d.scalarInt(h)})), last})
		end := d.op("Max", []string{ceilDiv(d.op("Mul", []string{batch, d.scalarInt(h + 1)})), d.op("Add", []string{start, one})})
		start1 := d.op("Unsqueeze", []string{start, d.ints(0)})
		end1 := d.op("Unsqueeze", []string{end, d.ints(0)})
		rows := d.op("Slice", []string{lens, start1, end1, d.ints(0)})
		s1 := d.op("ReduceMax", []string{rows, d.ints(0)}, attrInt("keepdims", 1)) // its width, >= 1
		b1 := d.op("Sub", []string{end1, start1})
		idx := d.op("Slice", []string{grid, d.op("Concat", []string{start1, d.ints(0)}, attrInt("axis", 0)),
			d.op("Concat", []string{end1, s1}, attrInt("axis", 0)), d.ints(0, 1)})
		m := d.op("Slice", []string{mask, d.op("Concat", []string{start1, d.ints(0, 0)}, attrInt("axis", 0)),
			d.op("Concat", []string{end1, s1, s1}, attrInt("axis", 0)), d.ints(0, 1, 2)})
		d.buckets = append(d.buckets, attnBucket{b1: b1, s1: s1,
			padIndex:  d.op("Add", []string{d.op("Reshape", []string{idx, d.ints(-1)}), p1}),
			contMask:  d.op("Unsqueeze", []string{m, d.ints(1, 2)}),
			splitKeys: d.op("Concat", []string{d.pv, s1}, attrInt("axis", 0))})
		starts, widths = append(starts, start1), append(widths, s1)
		offsets = append(offsets, d.op("Unsqueeze", []string{offset, d.ints(0)}))
		width := d.op("Squeeze", []string{s1, d.ints(0)})
		offset = d.op("Add", []string{offset, d.op("Mul", []string{d.op("Squeeze", []string{b1, d.ints(0)}), width})})
	}
	// Token t of row b at position j (full-layout slot b*S + j) sits at
	// offset[h] + (b - start[h])*width[h] + j in the concatenated outputs,
	// h = floor(b*k/B).
	b := d.op("Div", []string{d.unpadIndex, seq})
	j := d.op("Mod", []string{d.unpadIndex, seq})
	h := d.op("Div", []string{d.op("Mul", []string{b, d.scalarInt(k)}), batch})
	at := func(v []string) string {
		return d.op("Gather", []string{d.op("Concat", v, attrInt("axis", 0)), h}, attrInt("axis", 0))
	}
	rowBase := d.op("Add", []string{at(offsets), d.op("Mul", []string{d.op("Sub", []string{b, at(starts)}), at(widths)})})
	d.unpadBuckets = d.op("Add", []string{rowBase, j})
}
