package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Graph input and output names: the I/O contract with the runtime.
const (
	InputIDs      = "input_ids"      // int64 [batch, seq], right-padded
	AttentionMask = "attention_mask" // int64 [batch, seq], 1 real, 0 padding
	OutputLogits  = "logits"         // float32, shape per Head
)

// Metadata keys (ModelProto.metadata_props) written by BuildReranker.
const (
	MetaConfig = "rerankd.config" // arch.Config as JSON
	MetaHead   = "rerankd.head"   // Head.String()
	MetaYesID  = "rerankd.yes_id" // decimal
	MetaNoID   = "rerankd.no_id"  // decimal
)

// Versions written into every model.
const (
	IRVersion = 8
	Opset     = 18
	Producer  = "rerankd"
	// AttentionOpset and AttentionIRVersion are written instead when a
	// graph uses ONNX's Attention op (FuseAttention), which opset 23
	// introduced (ONNX 1.18, IR version 11).
	AttentionOpset     = 23
	AttentionIRVersion = 11
)

// BuildReranker writes the Qwen3 (or Qwen2) decoder of w as an ONNX graph with the
// output selected by opts.Head. The model shares memory with w's tensors:
// do not modify w while the model is in use.
func BuildReranker(w *arch.Weights, opts Options) (*Model, error) {
	if w == nil {
		return nil, errors.New("onnx: nil weights")
	}
	var errs []error
	if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := w.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("onnx: build reranker: %w", err)
	}
	c := w.Config
	if opts.YesID >= c.VocabSize || opts.NoID >= c.VocabSize {
		return nil, fmt.Errorf("onnx: yes/no ids %d/%d outside vocabulary of %d", opts.YesID, opts.NoID, c.VocabSize)
	}

	w, renamed, err := prepareWeights(w, opts)
	if err != nil {
		return nil, fmt.Errorf("onnx: build reranker: %w", err)
	}
	d := &decoder{graph: newGraph(), cfg: c, w: w, shapes: map[string]string{}, quant: opts.Quant, fuse: opts.Fusion, renamed: renamed}
	ids := d.input(InputIDs, onnxpb.TensorProto_INT64, "batch", "seq")
	mask := d.input(AttentionMask, onnxpb.TensorProto_INT64, "batch", "seq")
	d.prologue(ids, mask)

	d.scope = "embed"
	embed, err := d.weight(arch.EmbedTokens)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	h := d.op("Gather", []string{embed, d.op("Reshape", []string{ids, d.ints(-1)})}, attrInt("axis", 0))
	delta := ""
	for l := range c.NumHiddenLayers {
		if h, delta, err = d.layer(l, h, delta); err != nil {
			return nil, fmt.Errorf("onnx: layer %d: %w", l, err)
		}
	}
	if err := d.head(h, delta, mask, opts); err != nil {
		return nil, fmt.Errorf("onnx: head %v: %w", opts.Head, err)
	}

	cfgJSON, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("onnx: config: %w", err)
	}
	doc := fmt.Sprintf("%s reranker (%d layers, hidden %d), head %v, yes/no ids %d/%d. "+
		"Inputs right-padded; see github.com/rerankd/rerankd/model/onnx.",
		familyTitle(c), c.NumHiddenLayers, c.HiddenSize, opts.Head, opts.YesID, opts.NoID)
	m := newModel(d.graph, "rerankd_reranker", doc, opts.Storage)
	m.setMeta(MetaConfig, string(cfgJSON))
	m.setMeta(MetaHead, opts.Head.String())
	m.setMeta(MetaYesID, strconv.Itoa(opts.YesID))
	m.setMeta(MetaNoID, strconv.Itoa(opts.NoID))
	setQuantMeta(m, opts)
	return m, nil
}

// familyTitle names c's decoder family for doc strings ("Qwen3", "Qwen2").
func familyTitle(c arch.Config) string {
	f := c.Family()
	return strings.ToUpper(f[:1]) + f[1:]
}

func newModel(g *graph, name, doc string, s Storage) *Model {
	opset, ir := int64(Opset), int64(IRVersion)
	if slices.ContainsFunc(g.nodes, func(n *onnxpb.NodeProto) bool { return n.GetDomain() == "" && n.GetOpType() == "Attention" }) {
		opset, ir = AttentionOpset, AttentionIRVersion
	}
	opsets := []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}
	if slices.ContainsFunc(g.nodes, func(n *onnxpb.NodeProto) bool { return n.GetDomain() == msDomain }) {
		opsets = append(opsets, &onnxpb.OperatorSetIdProto{Domain: proto.String(msDomain), Version: proto.Int64(1)})
	}
	return &Model{
		Proto: &onnxpb.ModelProto{
			IrVersion:    proto.Int64(ir),
			OpsetImport:  opsets,
			ProducerName: proto.String(Producer), ProducerVersion: proto.String("1"),
			DocString: proto.String(doc), Graph: g.proto(name, doc),
		},
		Storage: s,
	}
}
