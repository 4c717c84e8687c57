package onnx

import (
	"fmt"
	"math"

	"github.com/rerankd/rerankd/model/arch"
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
	if wantQ {
		r.q = d.query(a, ws, d.cos, d.sin)
	}
	r.k = d.op("Reshape", []string{d.proj(a, ws, arch.KProj), d.ints(-1, nkv, hd)})
	r.k = d.rope(d.qkNorm(r.k, ws[arch.KNorm]))
	r.v = d.op("Reshape", []string{d.proj(a, ws, arch.VProj), d.ints(-1, nkv, hd)})
	return r
}

// query projects a [rows, hidden] to scaled, rotated queries [rows, nh, hd]
// with RoPE tables cos/sin [rows, 1, hd].
func (d *prefixDecoder) query(a string, ws map[string]string, cos, sin string) string {
	nh, _, hd, _ := d.heads()
	q := d.op("Reshape", []string{d.proj(a, ws, arch.QProj), d.ints(-1, nh, hd)})
	q = d.qkNorm(q, ws[arch.QNorm])
	halves := d.opN("Split", 2, []string{q}, attrInt("axis", -1), attrInt("num_outputs", 2))
	rot := d.op("Concat", []string{halves[1], halves[0]}, attrInt("axis", -1))
	q = d.op("Add", []string{d.op("Mul", []string{q, cos}), d.op("Mul", []string{rot, sin})})
	return d.op("Mul", []string{q, d.scalarFloat(float32(1 / math.Sqrt(float64(hd))))})
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

// splitPacked splits packed rows x into the prefix's and the
// continuations'.
func (d *prefixDecoder) splitPacked(x string) (prefix, cont string) {
	o := d.opN("Split", 2, []string{x, d.splitRows}, attrInt("axis", 0))
	return o[0], o[1]
}

// padded gathers packed continuation rows x [tokens, heads, hd] into the
// padded layout [batch, seq, heads, hd].
func (d *prefixDecoder) padded(x string, heads int64) string {
	x = d.op("Gather", []string{x, d.padIndex}, attrInt("axis", 0)) // [B*S, heads, hd]
	shape := d.op("Concat", []string{d.b1, d.s1, d.ints(heads, int64(d.cfg.HeadDim))}, attrInt("axis", 0))
	return d.op("Reshape", []string{x, shape})
}

// layer appends decoder block l to the packed stream h [prefix+tokens,
// hidden].
func (d *prefixDecoder) layer(l int, h string) (string, error) {
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", err
	}
	nh, nkv, hd, group := d.heads()

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	x := d.attnInputs(d.rmsNorm(h, ws[arch.InputNorm]), ws, true)
	qp, qc := d.splitPacked(x.q)
	kp, kc := d.splitPacked(x.k)
	vp, vc := d.splitPacked(x.v)
	kFull, vFull := d.prefixKV(l, kp, vp) // [nkv, P, hd]
	kFullT := d.op("Transpose", []string{kFull}, attrInts("perm", 0, 2, 1))

	// Prefix queries [nkv, group, prefix, hd] against kᵀ [nkv, 1, hd, P]
	// and v [nkv, 1, P, hd]. Query head kvh*group+j uses kv head kvh, as
	// in repeat_kv.
	qp = d.op("Reshape", []string{qp, d.op("Concat", []string{d.p1, d.ints(nkv, group, hd)}, attrInt("axis", 0))})
	qp = d.op("Transpose", []string{qp}, attrInts("perm", 1, 2, 0, 3))
	kFullT4 := d.op("Unsqueeze", []string{kFullT, d.ints(1)})
	pp := d.op("Softmax", []string{d.op("Add", []string{d.op("MatMul", []string{qp, kFullT4}), d.prefixMask})}, attrInt("axis", -1))
	vFull4 := d.op("Unsqueeze", []string{vFull, d.ints(1)})
	op := d.op("MatMul", []string{pp, vFull4})                         // [nkv, group, prefix, hd]
	op = d.op("Transpose", []string{op}, attrInts("perm", 2, 0, 1, 3)) // [prefix, nkv, group, hd]
	op = d.op("Reshape", []string{op, d.op("Concat", []string{d.p1, d.ints(nh * hd)}, attrInt("axis", 0))})

	// Continuations, padded: q [B, nkv, group, S, hd] against the prefix's
	// kᵀ [nkv, 1, hd, P] (broadcast over B by MatMul, no copy) and the
	// row's own k [B, nkv, 1, S, hd], transposed inside MatMul (ORT fuses
	// it: cheaper than moving head_dim off the last axis).
	pad := func(x string, heads, grp int64) string {
		shape := d.op("Concat", []string{d.b1, d.s1, d.ints(heads, grp, hd)}, attrInt("axis", 0))
		x = d.op("Reshape", []string{d.padded(x, heads*grp), shape})
		return d.op("Transpose", []string{x}, attrInts("perm", 0, 2, 3, 1, 4))
	}
	qc = pad(qc, nkv, group)
	kc = pad(kc, nkv, 1)
	vc = pad(vc, nkv, 1)
	kcT := d.op("Transpose", []string{kc}, attrInts("perm", 0, 1, 2, 4, 3))
	past := d.op("MatMul", []string{qc, kFullT4})                               // [B,nkv,group,S,P]
	cur := d.op("Add", []string{d.op("MatMul", []string{qc, kcT}), d.contMask}) // [B,nkv,group,S,S]
	pr := d.op("Softmax", []string{d.op("Concat", []string{past, cur}, attrInt("axis", -1))}, attrInt("axis", -1))
	parts := d.opN("Split", 2, []string{pr, d.splitKeys}, attrInt("axis", -1))
	oc := d.op("Add", []string{d.op("MatMul", []string{parts[0], vFull4}), d.op("MatMul", []string{parts[1], vc})})
	oc = d.op("Transpose", []string{oc}, attrInts("perm", 0, 3, 1, 2, 4)) // [B,S,nkv,group,hd]
	oc = d.op("Reshape", []string{oc, d.ints(-1, nh*hd)})                 // [B*S, nh*hd]
	oc = d.op("Gather", []string{oc, d.unpadIndex}, attrInt("axis", 0))   // [tokens, nh*hd]
	o := d.op("Concat", []string{op, oc}, attrInt("axis", 0))
	h = d.op("Add", []string{h, d.proj(o, ws, arch.OProj)})
	return d.mlp(l, h, ws), nil
}

// lastLayer runs decoder block l, the last, for what the score needs: every
// token's keys and values, then queries, attention, output projection and
// MLP for each row's last token only. It returns [batch, hidden].
func (d *prefixDecoder) lastLayer(l int, h string) (string, error) {
	ws, err := d.layerWeights(l)
	if err != nil {
		return "", err
	}
	nh, nkv, hd, group := d.heads()

	d.scope = fmt.Sprintf("layers.%d/attn", l)
	a := d.rmsNorm(h, ws[arch.InputNorm])
	x := d.attnInputs(a, ws, false)
	kp, kc := d.splitPacked(x.k)
	vp, vc := d.splitPacked(x.v)
	kFull, vFull := d.prefixKV(l, kp, vp) // [nkv, P, hd]

	// q [B, nkv, group, 1, hd] against the prefix (broadcast over B) and
	// the row's own keys [B, nkv, 1, hd, S].
	hLast := d.op("Gather", []string{h, d.lastRow}, attrInt("axis", 0)) // [B, hidden]
	q := d.query(d.op("Gather", []string{a, d.lastRow}, attrInt("axis", 0)), ws, d.lastCos, d.lastSin)
	q = d.op("Reshape", []string{q, d.ints(-1, nkv, group, 1, hd)})
	kFullT := d.op("Transpose", []string{d.op("Unsqueeze", []string{kFull, d.ints(1)})}, attrInts("perm", 0, 1, 3, 2)) // [nkv,1,hd,P]
	kcB := d.op("Transpose", []string{d.op("Unsqueeze", []string{d.padded(kc, nkv), d.ints(3)})}, attrInts("perm", 0, 2, 3, 1, 4))
	kcT := d.op("Transpose", []string{kcB}, attrInts("perm", 0, 1, 2, 4, 3)) // fused into MatMul
	vcB := d.op("Transpose", []string{d.op("Unsqueeze", []string{d.padded(vc, nkv), d.ints(3)})}, attrInts("perm", 0, 2, 3, 1, 4))
	past := d.op("MatMul", []string{q, kFullT})                                // [B,nkv,group,1,P]
	cur := d.op("Add", []string{d.op("MatMul", []string{q, kcT}), d.lastMask}) // [B,nkv,group,1,S]
	pr := d.op("Softmax", []string{d.op("Concat", []string{past, cur}, attrInt("axis", -1))}, attrInt("axis", -1))
	parts := d.opN("Split", 2, []string{pr, d.splitKeys}, attrInt("axis", -1))
	vFullB := d.op("Unsqueeze", []string{vFull, d.ints(1)}) // [nkv,1,P,hd]
	o := d.op("Add", []string{d.op("MatMul", []string{parts[0], vFullB}), d.op("MatMul", []string{parts[1], vcB})})
	o = d.op("Reshape", []string{o, d.ints(-1, nh*hd)}) // [B, nh*hd]
	hLast = d.op("Add", []string{hLast, d.proj(o, ws, arch.OProj)})
	return d.mlp(l, hLast, ws), nil
}
