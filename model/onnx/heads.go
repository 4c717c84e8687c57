package onnx

import (
	"fmt"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// head appends the final norm and the output selected by opts.Head to the
// residual stream h [batch*seq, hidden] plus the last block's output delta.
func (d *decoder) head(h, delta, mask string, opts Options) error {
	d.scope = "head"
	norm, err := d.weight(arch.FinalNorm)
	if err != nil {
		return err
	}
	hidden := int64(d.cfg.HiddenSize)
	if d.cfg.SeqCls() && opts.Head != HeadLogit {
		return fmt.Errorf("a sequence-classification checkpoint (%v) has no vocabulary head: only head %v", d.cfg.Architectures, HeadLogit)
	}
	if opts.Head == HeadVocabAll {
		out, err := d.headMatrix()
		if err != nil {
			return err
		}
		normed, _ := d.addNorm(h, delta, norm)
		logits := d.linear(normed, out) // [batch*seq, vocab]
		d.opTo(OutputLogits, "Reshape", []string{logits, d.shapeBS(-1)})
		d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch", "seq", d.cfg.VocabSize)
		return nil
	}
	// Norm only the gathered rows: RMSNorm is per position, so this equals
	// gathering the normed stream at a fraction of the cost.
	last, _ := d.addNorm(d.gatherLast(h, mask), d.gatherLast(delta, mask), norm) // [batch, hidden]
	switch opts.Head {
	case HeadLogit:
		diff, err := d.w.ScoreVector(opts.YesID, opts.NoID)
		if err != nil {
			return err
		}
		dn := d.floatInit("rerankd.head_diff", []int{int(hidden)}, diff)
		d.opTo(OutputLogits, "MatMul", []string{last, dn})
		d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch")
	case HeadYesNo:
		out, err := d.headMatrix()
		if err != nil {
			return err
		}
		rows := d.op("Gather", []string{out, d.ints(int64(opts.NoID), int64(opts.YesID))}, attrInt("axis", 0))
		d.opTo(OutputLogits, "Gemm", []string{last, rows}, attrInt("transB", 1))
		d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch", 2)
	case HeadVocabLast:
		out, err := d.headMatrix()
		if err != nil {
			return err
		}
		d.opTo(OutputLogits, "Gemm", []string{last, out}, attrInt("transB", 1))
		d.output(OutputLogits, onnxpb.TensorProto_FLOAT, "batch", d.cfg.VocabSize)
	}
	return nil
}

// headMatrix returns the full output head: embed_tokens when tied.
func (d *decoder) headMatrix() (string, error) {
	if d.cfg.TieWordEmbeddings {
		return d.weight(arch.EmbedTokens)
	}
	return d.weight(arch.LMHead)
}

// gatherLast picks, per row, the stream at the last real token of a
// right-padded batch: flat index row*seq + sum(mask[row]) - 1. A row with no
// real token is clamped to position 0 (its score is meaningless but finite).
func (d *decoder) gatherLast(h, mask string) string {
	flat, ok := d.consts["last:"+mask]
	if !ok {
		lens := d.op("ReduceSum", []string{mask, d.ints(1)}, attrInt("keepdims", 0)) // [batch]
		last := d.op("Max", []string{d.op("Sub", []string{lens, d.scalarInt(1)}), d.scalarInt(0)})
		rows := d.op("Range", []string{d.scalarInt(0), d.batch, d.scalarInt(1)})
		flat = d.op("Add", []string{d.op("Mul", []string{rows, d.seq}), last})
		d.consts["last:"+mask] = flat
	}
	return d.op("Gather", []string{h, flat}, attrInt("axis", 0))
}
