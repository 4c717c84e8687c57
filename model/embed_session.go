package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/model/onnx"
)

// EmbeddingOutput says which output of an embedding model the runtime reads.
type EmbeddingOutput int

const (
	// EmbedOutputHidden is last_hidden_state [batch, seq, hidden], pooled in
	// Go at each row's last real token. Preferred whenever present.
	EmbedOutputHidden EmbeddingOutput = iota + 1
	// EmbedOutputPooled is a pooled [batch, hidden] output
	// (sentence_embedding or embeddings) of a model without
	// last_hidden_state. How the export found the last token is unknown
	// (some take position -1, right only for left padding), so such models
	// get batches of equal-length rows only: no padding, nothing to get
	// wrong.
	EmbedOutputPooled
)

func (k EmbeddingOutput) String() string {
	switch k {
	case EmbedOutputHidden:
		return "last_hidden_state [batch,seq,hidden] (pooled by rerankd)"
	case EmbedOutputPooled:
		return "pooled [batch,hidden] (equal-length batches)"
	}
	return "unknown"
}

// pooledOutputNames are the names pooled outputs go by in exports
// (sentence-transformers/Optimum, and others).
var pooledOutputNames = []string{onnx.OutputSentenceEmbedding, "embeddings"}

// EmbeddingSession runs an ONNX embedding model (Qwen3-Embedding layout)
// with ONNX Runtime and returns one pooled, not yet normalised, vector per
// sequence. Inputs follow the reranker's contract (right-padded int64
// input_ids and attention_mask, optional position_ids). Safe for
// concurrent use.
type EmbeddingSession struct {
	base   *Session // the ORT session, inputs and cancellation, shared with the reranker
	output string
	kind   EmbeddingOutput
	dim    int // hidden size from the graph; -1 when dynamic
	// padLeft feeds rows left-padded, as the official Qwen3-Embedding code
	// does; tests use it to show pooling does not depend on the side.
	padLeft bool
}

// OpenEmbeddingSession loads path, checks it against the embedding I/O
// contract and prepares it for runs. padID fills padding positions.
// InitRuntime must have been called.
func OpenEmbeddingSession(path string, padID int, cfg SessionConfig) (*EmbeddingSession, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !ort.IsInitialized() {
		return nil, errors.New("onnx runtime not initialised: call InitRuntime first")
	}
	ins, outs, err := graphIO(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	base := &Session{padID: padID}
	inputNames, inErr := base.checkInputs(ins)
	name, kind, dim, outErr := detectEmbeddingOutput(outs)
	if err := errors.Join(inErr, outErr); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	sess, err := openSession(path, inputNames, []string{name}, cfg)
	if err != nil {
		return nil, err
	}
	base.sess = sess
	base.output = name
	return &EmbeddingSession{base: base, output: name, kind: kind, dim: dim}, nil
}

// detectEmbeddingOutput picks the output to read: last_hidden_state
// float32 [batch, seq, hidden] if present, else a pooled float32
// [batch, hidden] one. Anything else is refused, naming what was found.
func detectEmbeddingOutput(outs []ort.InputOutputInfo) (string, EmbeddingOutput, int, error) {
	var pooled *ort.InputOutputInfo
	var errs []error
	for i, o := range outs {
		switch {
		case o.Name == onnx.OutputLastHidden:
			if o.DataType != ort.TensorElementDataTypeFloat || len(o.Dimensions) != 3 {
				return "", 0, 0, fmt.Errorf("output %q is %v %v, want float32 [batch, seq, hidden]", o.Name, o.DataType, o.Dimensions)
			}
			return o.Name, EmbedOutputHidden, int(o.Dimensions[2]), nil
		case isPooledName(o.Name):
			if o.DataType != ort.TensorElementDataTypeFloat || len(o.Dimensions) != 2 {
				errs = append(errs, fmt.Errorf("output %q is %v %v, want float32 [batch, hidden]", o.Name, o.DataType, o.Dimensions))
			} else if pooled == nil {
				pooled = &outs[i]
			}
		}
	}
	if pooled != nil {
		return pooled.Name, EmbedOutputPooled, int(pooled.Dimensions[1]), nil
	}
	found := make([]string, len(outs))
	for i, o := range outs {
		found[i] = fmt.Sprintf("%s %v %v", o.Name, o.DataType, o.Dimensions)
	}
	errs = append(errs, fmt.Errorf("not an embedding model: want output %q float32 [batch, seq, hidden] or a pooled %s float32 [batch, hidden]; found %s",
		onnx.OutputLastHidden, strings.Join(pooledOutputNames, "/"), strings.Join(found, "; ")))
	return "", 0, 0, errors.Join(errs...)
}

func isPooledName(name string) bool { return slices.Contains(pooledOutputNames, name) }

// Output reports which output the session reads.
func (s *EmbeddingSession) Output() EmbeddingOutput { return s.kind }

// Dim is the vector size declared by the graph, or -1 when it is dynamic.
func (s *EmbeddingSession) Dim() int { return s.dim }

// SameLengthBatches reports whether every run must hold sequences of one
// length (pooled outputs of unknown padding convention).
func (s *EmbeddingSession) SameLengthBatches() bool { return s.kind == EmbedOutputPooled }

// Pooled runs one batch and returns each sequence's hidden state at its
// last real token (or the model's pooled vector). seqs are unpadded ids.
// Cancelling ctx terminates a run in progress.
func (s *EmbeddingSession) Pooled(ctx context.Context, seqs [][]int) ([][]float32, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	width := 0
	for i, q := range seqs {
		if len(q) == 0 {
			return nil, fmt.Errorf("sequence %d is empty", i)
		}
		width = max(width, len(q))
	}
	if s.kind == EmbedOutputPooled {
		for i, q := range seqs {
			if len(q) != width {
				return nil, fmt.Errorf("sequence %d has %d tokens, others %d: this model's pooled output needs equal-length batches", i, len(q), width)
			}
		}
	}
	n := len(seqs) * width
	ids, mask, pos := make([]int64, n), make([]int64, n), make([]int64, n)
	for b, q := range seqs {
		row := b * width
		off := 0
		if s.padLeft {
			off = width - len(q)
		}
		for j := range width {
			ids[row+j] = int64(s.base.padID)
			pos[row+j] = int64(j)
		}
		for j, id := range q {
			ids[row+off+j], mask[row+off+j] = int64(id), 1
		}
	}
	shape := ort.NewShape(int64(len(seqs)), int64(width))
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			release(v)
		}
	}()
	data := [][]int64{ids, mask}
	if s.base.hasPosition {
		data = append(data, pos)
	}
	for _, d := range data {
		t, err := ort.NewTensor(shape, d)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := s.base.run(ctx, inputs, outputs); err != nil {
		return nil, err
	}
	defer release(outputs[0])
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output %q is %T, want a float32 tensor", s.output, outputs[0])
	}
	if s.kind == EmbedOutputPooled {
		return pooledRows(t.GetData(), t.GetShape(), len(seqs))
	}
	return poolLast(t.GetData(), t.GetShape(), mask)
}

// poolLast returns, for each row of hidden states [batch, seq, dim], a copy
// of the vector at the row's last position whose mask is 1. This is the
// official last_token_pool for either padding side (left: the final
// position; right: sum(mask) - 1) without having to know which was used.
func poolLast(data []float32, shape []int64, mask []int64) ([][]float32, error) {
	if len(shape) != 3 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 {
		return nil, fmt.Errorf("hidden states of shape %v: want [batch, seq, hidden]", shape)
	}
	b, s, d := int(shape[0]), int(shape[1]), int(shape[2])
	if len(data) != b*s*d || len(mask) != b*s {
		return nil, fmt.Errorf("hidden states of shape %v hold %d values with a mask of %d", shape, len(data), len(mask))
	}
	out := make([][]float32, b)
	for r := range out {
		last := -1
		for j := s - 1; j >= 0; j-- {
			if mask[r*s+j] != 0 {
				last = j
				break
			}
		}
		if last < 0 {
			return nil, fmt.Errorf("row %d has no real token", r)
		}
		base := (r*s + last) * d
		out[r] = append([]float32(nil), data[base:base+d]...)
	}
	return out, nil
}

// pooledRows copies the rows of a pooled [batch, dim] output.
func pooledRows(data []float32, shape []int64, batch int) ([][]float32, error) {
	if len(shape) != 2 || shape[0] != int64(batch) || shape[1] < 1 || int64(len(data)) != shape[0]*shape[1] {
		return nil, fmt.Errorf("pooled output of shape %v with %d values: want [%d, hidden]", shape, len(data), batch)
	}
	d := int(shape[1])
	out := make([][]float32, batch)
	for r := range out {
		out[r] = append([]float32(nil), data[r*d:(r+1)*d]...)
	}
	return out, nil
}

// Close releases the session.
func (s *EmbeddingSession) Close() error { return s.base.Close() }
