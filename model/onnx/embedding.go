package onnx

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Embedding graph outputs. last_hidden_state is what Optimum and community
// ONNX exports of Qwen3-Embedding expose (the output of AutoModel, i.e.
// Qwen3Model, whose last step is the final RMSNorm); sentence_embedding is
// the sentence-transformers name for the pooled, normalised vector.
const (
	// OutputLastHidden is float32 [batch, seq, hidden]: the final-normed
	// hidden state at every position.
	OutputLastHidden = "last_hidden_state"
	// OutputSentenceEmbedding is float32 [batch, hidden]: the hidden state at
	// each row's last real token (right padding: sum(mask) - 1), L2-normalised.
	OutputSentenceEmbedding = "sentence_embedding"
)

// Model kinds recorded under MetaKind. Reranker graphs written before the
// key existed have none; Weights treats a missing kind as a reranker.
const (
	MetaKind      = "rerankd.kind"
	KindReranker  = "reranker"
	KindEmbedding = "embedding"
)

// EmbeddingOutputs selects which outputs an embedding graph has.
type EmbeddingOutputs int

const (
	// EmbedHidden outputs last_hidden_state only: the Optimum layout, and
	// rerankd's default (the runtime pools in Go, see model.Embedder).
	EmbedHidden EmbeddingOutputs = iota
	// EmbedHiddenAndPooled adds sentence_embedding, for consumers of the
	// file other than rerankd that want a ready vector.
	EmbedHiddenAndPooled
	// EmbedPooled outputs sentence_embedding only, the layout of some
	// community exports (tests use it to exercise that path).
	EmbedPooled
)

var embeddingOutputNames = [...]string{"hidden", "hidden+pooled", "pooled"}

func (o EmbeddingOutputs) String() string {
	if o < 0 || int(o) >= len(embeddingOutputNames) {
		return fmt.Sprintf("EmbeddingOutputs(%d)", int(o))
	}
	return embeddingOutputNames[o]
}

// EmbeddingOptions configure BuildEmbedding.
type EmbeddingOptions struct {
	// Outputs selects the graph outputs; EmbedHidden by default.
	Outputs EmbeddingOutputs
	// Storage decides how Save lays the weights out on disk.
	Storage Storage
}

// NewEmbeddingOptions returns the defaults: last_hidden_state only,
// default storage.
func NewEmbeddingOptions() EmbeddingOptions {
	return EmbeddingOptions{Outputs: EmbedHidden, Storage: DefaultStorage()}
}

// Validate reports every problem at once.
func (o EmbeddingOptions) Validate() error {
	var errs []error
	if o.Outputs < EmbedHidden || o.Outputs > EmbedPooled {
		errs = append(errs, fmt.Errorf("unknown embedding outputs %v", o.Outputs))
	}
	if err := o.Storage.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// l2Floor keeps the in-graph normalisation finite for an all-zero vector
// (as torch.nn.functional.normalize's eps does).
const l2Floor = 1e-12

// BuildEmbedding writes the Qwen3 decoder of w without any head, as an
// embedding model (Qwen3-Embedding layout): the same inputs and layers as
// BuildReranker, the final RMSNorm, and the outputs chosen by opts. An
// lm_head in w is ignored and none is required, whatever
// tie_word_embeddings says. The model shares memory with w's tensors.
func BuildEmbedding(w *arch.Weights, opts EmbeddingOptions) (*Model, error) {
	if w == nil {
		return nil, errors.New("onnx: nil weights")
	}
	bw := &arch.Weights{Config: w.Config.Backbone(), Tensors: w.Tensors}
	if err := errors.Join(opts.Validate(), bw.Check()); err != nil {
		return nil, fmt.Errorf("onnx: build embedding: %w", err)
	}
	c := bw.Config
	d := &decoder{graph: newGraph(), cfg: c, w: bw, shapes: map[string]string{}}
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
	h = d.op("Add", []string{h, delta})
	if err := d.embeddingOutputs(h, mask, opts.Outputs); err != nil {
		return nil, fmt.Errorf("onnx: embedding outputs: %w", err)
	}
	cfgJSON, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("onnx: config: %w", err)
	}
	doc := fmt.Sprintf("Qwen3 embedding model (%d layers, hidden %d), outputs %v. "+
		"Inputs right-padded; see github.com/rerankd/rerankd/model/onnx.", c.NumHiddenLayers, c.HiddenSize, opts.Outputs)
	m := newModel(d.graph, "rerankd_embedding", doc, opts.Storage)
	m.setMeta(MetaKind, KindEmbedding)
	m.setMeta(MetaConfig, string(cfgJSON))
	return m, nil
}

// embeddingOutputs appends the final norm and the selected outputs to the
// residual stream h [batch*seq, hidden].
func (d *decoder) embeddingOutputs(h, mask string, outs EmbeddingOutputs) error {
	d.scope = "final"
	norm, err := d.weight(arch.FinalNorm)
	if err != nil {
		return err
	}
	hidden := d.cfg.HiddenSize
	var last string
	if outs == EmbedPooled {
		// RMSNorm is per position: norming only the gathered rows equals
		// gathering the normed stream.
		last = d.rmsNorm(d.gatherLast(h, mask), norm)
	} else {
		normed := d.rmsNorm(h, norm)
		d.opTo(OutputLastHidden, "Reshape", []string{normed, d.shapeBS(int64(hidden))})
		d.output(OutputLastHidden, onnxpb.TensorProto_FLOAT, "batch", "seq", hidden)
		if outs == EmbedHidden {
			return nil
		}
		last = d.gatherLast(normed, mask)
	}
	d.scope = "pool"
	l2 := d.op("ReduceL2", []string{last, d.ints(-1)}, attrInt("keepdims", 1))
	l2 = d.op("Max", []string{l2, d.scalarFloat(l2Floor)})
	d.opTo(OutputSentenceEmbedding, "Div", []string{last, l2})
	d.output(OutputSentenceEmbedding, onnxpb.TensorProto_FLOAT, "batch", hidden)
	return nil
}

// BackboneWeights reads back the architecture and weights of a model built
// by BuildEmbedding, for the reference engine. The config is the backbone
// one (arch.Config.Backbone): no head tensor is expected.
func (m *Model) BackboneWeights() (*arch.Weights, error) {
	if k, _ := m.Meta(MetaKind); k != KindEmbedding {
		return nil, fmt.Errorf("onnx: model kind %q, want %q (a reranker graph has a head and no last_hidden_state)", k, KindEmbedding)
	}
	w, _, err := m.readWeights()
	return w, err
}
