package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Head selects what a reranker graph outputs.
type Head int

const (
	// HeadLogit outputs logits [batch]: dot(final hidden state at the last
	// real token, head[yes] - head[no]). This is rerankd's own contract:
	// score = sigmoid(logit), no vocabulary-sized tensor ever exists.
	HeadLogit Head = iota
	// HeadYesNo outputs logits [batch, 2] = (no, yes) at the last real token,
	// the layout of some community exports.
	HeadYesNo
	// HeadVocabLast outputs logits [batch, vocab] at the last real token.
	HeadVocabLast
	// HeadVocabAll outputs logits [batch, seq, vocab] at every position, as a
	// plain causal-LM export does (the runtime must pick the position).
	HeadVocabAll
)

var headNames = [...]string{"logit", "yes_no", "vocab_last", "vocab_all"}

// String returns the name recorded in the model's metadata.
func (h Head) String() string {
	if h < 0 || int(h) >= len(headNames) {
		return fmt.Sprintf("Head(%d)", int(h))
	}
	return headNames[h]
}

// ParseHead is the inverse of Head.String.
func ParseHead(s string) (Head, error) {
	for i, n := range headNames {
		if n == s {
			return Head(i), nil
		}
	}
	return 0, fmt.Errorf("unknown head kind %q (want one of %v)", s, headNames)
}

// Options configure BuildReranker.
type Options struct {
	// Head selects the output; HeadLogit unless testing other export layouts.
	Head Head
	// YesID and NoID are the token ids of "yes" and "no", looked up from the
	// tokenizer by the caller (9693 and 2152 for Qwen3). They select the two
	// rows of the output head that HeadLogit and HeadYesNo use, and are
	// recorded in the metadata for every head.
	YesID, NoID int
	// Storage decides how Save lays the weights out on disk.
	Storage Storage
	// Quant selects how the projection weights are stored and multiplied
	// (QuantNone: float32 Gemm, the reference). Quantised graphs record the
	// choice in MetaQuant.
	Quant Quant
	// Calibration is QuantInt8Smooth's activation statistics (required
	// for it, ignored otherwise): model/folder fills it from calibration
	// text through the reference pass.
	Calibration *Calibration
	// SmoothAlpha is QuantInt8Smooth's strength, in [0, 1]
	// (ChooseSmoothAlpha picks it); negative: no smoothing (the variant is
	// then QuantInt8 under another name).
	SmoothAlpha float64
	// Fusion selects ONNX Runtime kernels (domain com.microsoft) written in
	// place of standard-op subgraphs; 0 writes standard ONNX ops only.
	// NewOptions sets DefaultFusion.
	Fusion Fusion
	// AttentionBuckets splits a shared-prefix batch's rows into this many
	// runs of consecutive rows whose continuation attention is padded to
	// the run's longest row instead of the batch's (0 and 1: one run). The
	// engine passes rows longest first, so the shorter half of a batch
	// computes attention at its own width. NewOptions sets
	// DefaultAttentionBuckets.
	AttentionBuckets int
}

// DefaultAttentionBuckets is NewOptions' AttentionBuckets: one run, the
// graph measured at full depth (docs/perf/graph-fusion.md).
const DefaultAttentionBuckets = 1

// DefaultAttentionFormBuckets is the attention buckets of the CPU
// attention form (AttentionFormFile) that model folders carry: with one
// fused kernel per bucket and layer, two runs cost less than one padded
// to the longest row (docs/perf/fused-attention.md).
const DefaultAttentionFormBuckets = 2

// maxAttentionBuckets bounds AttentionBuckets: every bucket repeats the
// attention's kernels in every layer.
const maxAttentionBuckets = 8

// Fusion is a set of fused kernels (ONNX Runtime's contrib ops, domain
// com.microsoft, and ONNX's own Attention, all with CPU kernels in ONNX
// Runtime 1.30) a graph may use where a standard-op subgraph computes the
// same thing with more kernels and more passes over memory. Each computes
// the same function up to float32 rounding.
type Fusion uint8

const (
	// FuseRotary writes RoPE as RotaryEmbedding (one kernel) instead of
	// Split, Concat, two Muls and an Add over every query and key.
	FuseRotary Fusion = 1 << iota
	// FuseSkipNorm writes each residual Add and the RMSNorm that follows it
	// as one SkipSimplifiedLayerNormalization (ORT does not fuse them
	// itself: the sum has a second consumer).
	FuseSkipNorm
	// FuseScores writes the attention scores q·kᵀ·(1/sqrt(head_dim)) as
	// FusedMatMul (transB, alpha): no transposed copy of the keys and no
	// separate scaling of the queries.
	FuseScores
	// FuseAttention writes the shared-prefix graph's attention (every layer
	// but the last) as ONNX's own Attention op (opset 23, so the graph
	// imports opset 23): the prefix's one node with the past K/V, and one
	// node per attention bucket over the prefix's K/V repeated per row (the
	// kernel takes no broadcast keys) followed by the row's own, with an
	// additive mask, in place of the padded layout's transposes, score
	// products, mask, concat, softmax and split. The plain graph and the
	// last layer's one-token attention keep their standard ops.
	FuseAttention

	fuseAll = FuseRotary | FuseSkipNorm | FuseScores | FuseAttention
)

type fusionName struct {
	f    Fusion
	name string
}

var fusionNames = []fusionName{{FuseRotary, "rotary"}, {FuseSkipNorm, "skipnorm"}, {FuseScores, "scores"}, {FuseAttention, "attention"}}

// DefaultFusion is what NewOptions (and so every model folder unless
// asked otherwise) uses: standard ops only. The contrib kernels gain ~20% on
// a 4-layer graph of the 0.6B model's width but nothing measurable on the
// served path of the full 28-layer model, and the full plain graph ran
// slower with them (docs/perf/graph-fusion.md); AllFusions selects them.
const DefaultFusion Fusion = 0

// AllFusions is every fusion this package writes.
const AllFusions = fuseAll

// String lists the set's names joined by "+" ("none" when empty).
func (f Fusion) String() string {
	var parts []string
	for _, n := range fusionNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	if rest := f &^ fuseAll; rest != 0 {
		parts = append(parts, fmt.Sprintf("Fusion(%#x)", uint8(rest)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// ParseFusion is the inverse of Fusion.String ("all" is every fusion).
func ParseFusion(s string) (Fusion, error) {
	switch s {
	case "none", "":
		return 0, nil
	case "all":
		return fuseAll, nil
	}
	var f Fusion
	for _, part := range strings.Split(s, "+") {
		i := slices.IndexFunc(fusionNames, func(n fusionName) bool { return n.name == part })
		if i < 0 {
			return 0, fmt.Errorf("unknown fusion %q (want none, all, or names from rotary, skipnorm, scores, attention joined by +)", part)
		}
		f |= fusionNames[i].f
	}
	return f, nil
}

// Storage configures where Save puts initializer data.
type Storage struct {
	// ExternalThreshold: when the initializers total more bytes than this,
	// Save writes them to model.onnx.data next to model.onnx. Protobuf cannot
	// hold 2 GiB, so larger models always go external whatever this says.
	ExternalThreshold int64
	// ForceExternal writes external data regardless of size (tests, or to
	// let ORT memory-map weights of small models).
	ForceExternal bool
	// Alignment of each tensor's offset in the data file; a power of two.
	// 4096 (a page) lets ORT memory-map tensors in place.
	Alignment int64
}

// DefaultExternalThreshold is 1.5 GB: comfortably under protobuf's 2 GiB
// limit including the graph itself.
const DefaultExternalThreshold = 1_500_000_000

// NewOptions returns options for a HeadLogit reranker with the given
// yes/no token ids and default storage.
func NewOptions(yesID, noID int) Options {
	return Options{Head: HeadLogit, YesID: yesID, NoID: noID, Storage: DefaultStorage(),
		Fusion: DefaultFusion, AttentionBuckets: DefaultAttentionBuckets}
}

// DefaultStorage returns the default Storage: inline below 1.5 GB, 4096-byte
// alignment.
func DefaultStorage() Storage {
	return Storage{ExternalThreshold: DefaultExternalThreshold, Alignment: 4096}
}

// Validate reports every problem at once.
func (o Options) Validate() error {
	var errs []error
	if o.Head < HeadLogit || o.Head > HeadVocabAll {
		errs = append(errs, fmt.Errorf("unknown head %v", o.Head))
	}
	if o.YesID < 0 {
		errs = append(errs, fmt.Errorf("yes id must be >= 0, got %d", o.YesID))
	}
	if o.NoID < 0 {
		errs = append(errs, fmt.Errorf("no id must be >= 0, got %d", o.NoID))
	}
	if o.YesID == o.NoID {
		errs = append(errs, fmt.Errorf("yes and no ids are both %d", o.YesID))
	}
	if err := o.Storage.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !o.Quant.Valid() {
		errs = append(errs, fmt.Errorf("unknown weight quantisation %v", o.Quant))
	}
	if o.Quant.smooths() && o.Calibration == nil {
		errs = append(errs, fmt.Errorf("%v needs a calibration (Options.Calibration)", o.Quant))
	}
	if o.SmoothAlpha > 1 || math.IsNaN(o.SmoothAlpha) {
		errs = append(errs, fmt.Errorf("smooth alpha %v: want <= 1 (negative: none)", o.SmoothAlpha))
	}
	if o.Fusion&^fuseAll != 0 {
		errs = append(errs, fmt.Errorf("unknown fusion %v", o.Fusion))
	}
	if o.AttentionBuckets < 0 || o.AttentionBuckets > maxAttentionBuckets {
		errs = append(errs, fmt.Errorf("attention buckets %d: want 0..%d", o.AttentionBuckets, maxAttentionBuckets))
	}
	return errors.Join(errs...)
}

// Validate reports every problem at once.
func (s Storage) Validate() error {
	var errs []error
	if s.ExternalThreshold < 0 {
		errs = append(errs, fmt.Errorf("external threshold must be >= 0, got %d", s.ExternalThreshold))
	}
	if s.Alignment <= 0 || s.Alignment&(s.Alignment-1) != 0 {
		errs = append(errs, fmt.Errorf("alignment must be a power of two, got %d", s.Alignment))
	}
	return errors.Join(errs...)
}
