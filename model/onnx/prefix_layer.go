package onnx

import (
	"fmt"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// qkv is one layer's attention inputs for the packed stream: q [rows, nh,
// hd] (normed, rotated, scaled), k [rows, nkv, hd] (normed, rotated) and v
// [rows, nkv, hd].
type qkv struct{ q, k, v string }

// attnInputs normalises a [rows, hidden] and projects it; without q (wantQ
// false) only keys and values are computed.
func (d *prefixDecoder) attnInputs(a string, ws map[string]string, wantQ bool) qkv {
	_, nkv, hd, _ := d.heads()
	var r qkv
	if wantQ && d.fuse&FuseAttention != 0 {
		r.q = d.rotatedQuery(a, ws, d.at) // the Attention node scales
	} else if wantQ {
		r.q = d.query(a, ws, d.at)
	}
	r.k = d.op("Reshape", []string{d.proj(a, ws, arch.KProj), d.ints(-1, nkv, hd)})
	r.k = d.rope(d.qkNorm(r.k, ws[arch.KNorm]), nkv, d.at)
	r.v = d.op("Reshape", []string{d.proj(a, ws, arch.VProj), d.ints(-1, nkv, hd)})
	return r
}

// query projects a [rows, hidden] to rotated queries [rows, nh, hd], RoPE
// at at, scaled unless the scores fold the scale in (scaleQuery).
func (d *prefixDecoder) query(a string, ws map[string]string, at ropeAt) string {
	return d.scaleQuery(d.rotatedQuery(a, ws, at))
}

// rotatedQuery is query without the scale.
func (d *prefixDecoder) rotatedQuery(a string, ws map[string]string, at ropeAt) string {
	nh, _, hd, _ := d.heads()
	q := d.op("Reshape", []string{d.proj(a, ws, arch.QProj), d.ints(-1, nh, hd)})
	return d.rope(d.qkNorm(q, ws[arch.QNorm]), nh, at)
}

// once returns a thunk computing f() on its first call only.
func once(f func() string) func() string {
	var v string
	return func() string {
		if v == "" {
			v = f()
		}
		return v
	}
}

// prefixKV splits the prefix rows off k and v, appends them to layer l's
// past keys/values and records the result as the layer's present K/V:
// [nkv, P, hd] each, P = past + prefix.
func (d *prefixDecoder) prefixKV(l int, kp, vp string) (string, string) {
	idx := d.scalarInt(int64(l))
	full := func(past, x string) string {
		past = d.op("Gather", []string{past, idx}, attrInt("axis", 0)) // [nkv, past, hd]
		x = d.op("Transpose", []string{x}, attrInts("perm", 1, 0, 2))  // [nkv, prefix, hd]
		return d.op("Concat", []string{past, x}, attrInt("axis", 1))   // [nkv, P, hd]
	}
	k, v := full(d.pastK, kp), full(d.pastV, vp)
	d.presentK = append(d.presentK, d.op("Unsqueeze", []string{k, d.ints(0)}))
	d.presentV = append(d.presentV, d.op("Unsqueeze", []string{v, d.ints(0)}))
	return k, v
}

// prefixRows returns the prefix's rows of the packed stream x (the
// continuations' are read from x itself by the padding gathers: no copy).
func (d *prefixDecoder) prefixRows(x string) string {
	return d.op("Slice", []string{x, d.ints(0), d.p1, d.ints(0)})
}

// padded gathers the continuation rows of the packed stream x [prefix +
// tokens, heads, hd] into bucket bk's padded layout [b, s, heads, hd].
func (d *prefixDecoder) padded(x string, heads int64, bk attnBucket) string {
	x = d.op("Gather", []string{x, bk.padIndex}, attrInt("axis", 0)) // [b*s, heads, hd]
	shape := d.op("Concat", []string{bk.b1, bk.s1, d.ints(heads, int64(d.cfg.HeadDim))}, attrInt("axis", 0))
	return d.op("Reshape", []string{x, shape})
}

// fullBatch is the whole batch as one bucket.
func (d *prefixDecoder) fullBatch() attnBucket {
	return attnBucket{b1: d.b1, s1: d.s1, padIndex: d.padAll, contMask: d.contMask, splitKeys: d.splitKeys}
}

// layer appends decoder block l to the packed stream h [prefix+tokens,
// hidden] plus delta (the previous block's output, "" for none) and returns
// the stream and this block's output, likewise.
func (d *prefixDecoder) layer(l int, h, delta string) (string, string, error) {
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", "", err
	}
	nh, nkv, hd, group := d.heads()

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	a, h := d.addNorm(h, delta, ws[arch.InputNorm])
	x := d.attnInputs(a, ws, true)
	if d.fuse&FuseAttention != 0 {
		o := d.fusedAttention(l, x)
		d.scope = fmt.Sprintf("layers.%d/mlp", l)
		m, h := d.addNorm(h, d.proj(o, ws, arch.OProj), ws[arch.PostNorm])
		return h, d.mlp(m, ws), nil
	}
	qp, kp, vp := d.prefixRows(x.q), d.prefixRows(x.k), d.prefixRows(x.v)
	kFull, vFull := d.prefixKV(l, kp, vp)                   // [nkv, P, hd]
	kFull4 := d.op("Unsqueeze", []string{kFull, d.ints(1)}) // [nkv, 1, P, hd]
	kFullT4 := once(func() string {
		return d.op("Unsqueeze", []string{d.op("Transpose", []string{kFull}, attrInts("perm", 0, 2, 1)), d.ints(1)})
	})
	kFull4f := func() string { return kFull4 }

	// Prefix queries [nkv, group, prefix, hd] against kᵀ [nkv, 1, hd, P]
	// and v [nkv, 1, P, hd]. Query head kvh*group+j uses kv head kvh, as
	// in repeat_kv.
	qp = d.op("Reshape", []string{qp, d.op("Concat", []string{d.p1, d.ints(nkv, group, hd)}, attrInt("axis", 0))})
	qp = d.op("Transpose", []string{qp}, attrInts("perm", 1, 2, 0, 3))
	pp := d.op("Softmax", []string{d.op("Add", []string{d.scores(qp, kFull4f, kFullT4), d.prefixMask})}, attrInt("axis", -1))
	vFull4 := d.op("Unsqueeze", []string{vFull, d.ints(1)})
	op := d.op("MatMul", []string{pp, vFull4})                         // [nkv, group, prefix, hd]
	op = d.op("Transpose", []string{op}, attrInts("perm", 2, 0, 1, 3)) // [prefix, nkv, group, hd]
	op = d.op("Reshape", []string{op, d.op("Concat", []string{d.p1, d.ints(nh * hd)}, attrInt("axis", 0))})

	// The prefix's output, then each bucket's padded one; one gather packs
	// them as the stream is.
	outs := []string{op}
	for _, bk := range d.buckets {
		outs = append(outs, d.contAttention(x.q, x.k, x.v, kFull4f, kFullT4, vFull, bk))
	}
	o := d.op("Gather", []string{d.op("Concat", outs, attrInt("axis", 0)), d.unpadAll}, attrInt("axis", 0)) // [prefix+tokens, nh*hd]
	d.scope = fmt.Sprintf("layers.%d/mlp", l)
	m, h := d.addNorm(h, d.proj(o, ws, arch.OProj), ws[arch.PostNorm])
	return h, d.mlp(m, ws), nil
}

// lastLayer runs decoder block l, the last, on the stream h plus delta for
// what the score needs: every token's keys and values, then queries,
// attention, output projection and MLP for each row's last token only. It
// returns the stream and the block's output at those tokens, [batch,
// hidden] each.
func (d *prefixDecoder) lastLayer(l int, h, delta string) (string, string, error) {
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", "", err
	}
	nh, nkv, hd, group := d.heads()

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	a, h := d.addNorm(h, delta, ws[arch.InputNorm])
	x := d.attnInputs(a, ws, false)
	kc, vc := x.k, x.v                                                  // the padding gathers read the continuations' rows
	kFull, vFull := d.prefixKV(l, d.prefixRows(x.k), d.prefixRows(x.v)) // [nkv, P, hd]

	// q [B, nkv, group, 1, hd] against the prefix (broadcast over B) and
	// the row's own keys [B, nkv, 1, hd, S].
	hLast := d.op("Gather", []string{h, d.lastRow}, attrInt("axis", 0)) // [B, hidden]
	q := d.query(d.op("Gather", []string{a, d.lastRow}, attrInt("axis", 0)), ws, d.lastAt)
	q = d.op("Reshape", []string{q, d.ints(-1, nkv, group, 1, hd)})
	kFull4 := d.op("Unsqueeze", []string{kFull, d.ints(1)})                                              // [nkv,1,P,hd]
	kFullT := func() string { return d.op("Transpose", []string{kFull4}, attrInts("perm", 0, 1, 3, 2)) } // [nkv,1,hd,P]
	kcB := d.op("Transpose", []string{d.op("Unsqueeze", []string{d.padded(kc, nkv, d.fullBatch()), d.ints(3)})}, attrInts("perm", 0, 2, 3, 1, 4))
	kcT := func() string { return d.op("Transpose", []string{kcB}, attrInts("perm", 0, 1, 2, 4, 3)) } // fused into MatMul
	vcB := d.op("Transpose", []string{d.op("Unsqueeze", []string{d.padded(vc, nkv, d.fullBatch()), d.ints(3)})}, attrInts("perm", 0, 2, 3, 1, 4))
	past := d.scores(q, func() string { return kFull4 }, kFullT)                             // [B,nkv,group,1,P]
	cur := d.op("Add", []string{d.scores(q, func() string { return kcB }, kcT), d.lastMask}) // [B,nkv,group,1,S]
	pr := d.op("Softmax", []string{d.op("Concat", []string{past, cur}, attrInt("axis", -1))}, attrInt("axis", -1))
	parts := d.opN("Split", 2, []string{pr, d.splitKeys}, attrInt("axis", -1))
	vFullB := d.op("Unsqueeze", []string{vFull, d.ints(1)}) // [nkv,1,P,hd]
	o := d.op("Add", []string{d.op("MatMul", []string{parts[0], vFullB}), d.op("MatMul", []string{parts[1], vcB})})
	o = d.op("Reshape", []string{o, d.ints(-1, nh*hd)}) // [B, nh*hd]
	d.scope = fmt.Sprintf("layers.%d/mlp", l)
	m, hLast := d.addNorm(hLast, d.proj(o, ws, arch.OProj), ws[arch.PostNorm])
	return hLast, d.mlp(m, ws), nil
}

// contAttention is the continuations' attention for the rows of bucket bk:
// the packed stream's q [prefix+tokens, nh, hd] and k, v [.., nkv, hd], its
// continuation rows padded to q [b, nkv,
// group, s, hd], against the prefix's keys [nkv, 1, P, hd] (broadcast over
// b by MatMul, no copy) and the row's own k [b, nkv, 1, s, hd]. It returns
// the output in the bucket's padded layout, [b*s, nh*hd].
func (d *prefixDecoder) contAttention(qc, kc, vc string, kFull4, kFullT4 func() string, vFull string, bk attnBucket) string {
	nh, nkv, hd, group := d.heads()
	pad := func(x string, heads, grp int64) string {
		shape := d.op("Concat", []string{bk.b1, bk.s1, d.ints(heads, grp, hd)}, attrInt("axis", 0))
		x = d.op("Reshape", []string{d.padded(x, heads*grp, bk), shape})
		return d.op("Transpose", []string{x}, attrInts("perm", 0, 2, 3, 1, 4))
	}
	qc = pad(qc, nkv, group)
	kc = pad(kc, nkv, 1)
	vc = pad(vc, nkv, 1)
	kcT := func() string { return d.op("Transpose", []string{kc}, attrInts("perm", 0, 1, 2, 4, 3)) }
	past := d.scores(qc, kFull4, kFullT4)                                                     // [b,nkv,group,s,P]
	cur := d.op("Add", []string{d.scores(qc, func() string { return kc }, kcT), bk.contMask}) // [b,nkv,group,s,s]
	pr := d.op("Softmax", []string{d.op("Concat", []string{past, cur}, attrInt("axis", -1))}, attrInt("axis", -1))
	parts := d.opN("Split", 2, []string{pr, bk.splitKeys}, attrInt("axis", -1))
	vFull4 := d.op("Unsqueeze", []string{vFull, d.ints(1)})
	oc := d.op("Add", []string{d.op("MatMul", []string{parts[0], vFull4}), d.op("MatMul", []string{parts[1], vc})})
	oc = d.op("Transpose", []string{oc}, attrInts("perm", 0, 3, 1, 2, 4)) // [b,s,nkv,group,hd]
	return d.op("Reshape", []string{oc, d.ints(-1, nh*hd)})               // [b*s, nh*hd]
}

// fusedAttention is layer l's attention (FuseAttention) for the packed
// stream's x (q unscaled): one Attention node for the prefix, causal over
// the layer's past keys and its own, whose present K/V is the layer's;
// then per bucket one node over keys and values that are that present
// K/V repeated per row followed by the row's continuation, masked by
// fusedMask. The continuation nodes take no past: the kernel would then
// also write a present K/V per row that nothing reads (measured: +0.7 GB
// peak resident memory on the 0.6B model). It returns the output for the
// packed rows, [prefix+tokens, nh*hd].
func (d *prefixDecoder) fusedAttention(l int, x qkv) string {
	nh, nkv, hd, _ := d.heads()
	attrs := []*onnxpb.AttributeProto{attrInt("q_num_heads", nh), attrInt("kv_num_heads", nkv), attrFloat("scale", d.scale())}
	flat := func(x string, heads int64) string { return d.op("Reshape", []string{x, d.ints(1, -1, heads*hd)}) }
	idx := d.scalarInt(int64(l))
	past := func(p string) string { // [1, nkv, past, hd]
		return d.op("Unsqueeze", []string{d.op("Gather", []string{p, idx}, attrInt("axis", 0)), d.ints(0)})
	}
	r := d.opN("Attention", 3, []string{flat(d.prefixRows(x.q), nh), flat(d.prefixRows(x.k), nkv), flat(d.prefixRows(x.v), nkv),
		"", past(d.pastK), past(d.pastV)}, append(attrs, attrInt("is_causal", 1))...)
	d.presentK, d.presentV = append(d.presentK, r[1]), append(d.presentV, r[2])
	// The prefix's K/V as rows, [1, P, nkv*hd], for the continuations.
	rowsOf := func(present string) string {
		return flat(d.op("Transpose", []string{present}, attrInts("perm", 0, 2, 1, 3)), nkv)
	}
	kRows, vRows := rowsOf(r[1]), rowsOf(r[2])
	outs := []string{d.op("Reshape", []string{r[0], d.ints(-1, nh*hd)})}
	for i := range d.buckets {
		bk := &d.buckets[i]
		rows := d.op("Concat", []string{bk.b1, d.ints(1, 1)}, attrInt("axis", 0))
		pad := func(x string, heads int64) string {
			shape := d.op("Concat", []string{bk.b1, bk.s1, d.ints(heads * hd)}, attrInt("axis", 0))
			return d.op("Reshape", []string{d.padded(x, heads, *bk), shape}) // [b, s, heads*hd]
		}
		keys := func(prefix, x string) string { // [b, P+s, nkv*hd]
			return d.op("Concat", []string{d.op("Expand", []string{prefix, rows}), pad(x, nkv)}, attrInt("axis", 1))
		}
		oc := d.opN("Attention", 1, []string{pad(x.q, nh), keys(kRows, x.k), keys(vRows, x.v), d.fusedMask(bk)}, attrs...)[0]
		outs = append(outs, d.op("Reshape", []string{oc, d.ints(-1, nh*hd)})) // [b*s, nh*hd]
	}
	return d.op("Gather", []string{d.op("Concat", outs, attrInt("axis", 0)), d.unpadAll}, attrInt("axis", 0))
}

// fusedMask is bucket bk's additive attention mask for FuseAttention,
// [b, 1, s, P+s]: every past and prefix key, then the row's own keys
// causally (the padding's masked), built once for all layers.
func (d *prefixDecoder) fusedMask(bk *attnBucket) string {
	if bk.fusedMask == "" {
		scope := d.scope
		d.scope = "prologue"
		own := d.op("Squeeze", []string{bk.contMask, d.ints(1)}) // [b, 1, s, s]
		shape := d.op("Concat", []string{bk.b1, d.ints(1), bk.s1, d.pv}, attrInt("axis", 0))
		zeros := d.op("Expand", []string{d.scalarFloat(0), shape})
		bk.fusedMask = d.op("Concat", []string{zeros, own}, attrInt("axis", -1))
		d.scope = scope
	}
	return bk.fusedMask
}
