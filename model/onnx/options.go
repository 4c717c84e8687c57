package onnx

import (
	"errors"
	"fmt"
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
	return Options{Head: HeadLogit, YesID: yesID, NoID: noID, Storage: DefaultStorage()}
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
	if o.Quant < QuantNone || o.Quant > QuantInt8 {
		errs = append(errs, fmt.Errorf("unknown weight quantisation %v", o.Quant))
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
