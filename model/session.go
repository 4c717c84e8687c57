package model

import (
	"context"
	"errors"
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/batching"
)

// ErrIncompatibleModel marks a model file whose inputs or outputs do not fit
// the I/O contract.
var ErrIncompatibleModel = errors.New("incompatible model")

// Session runs one ONNX reranker with ONNX Runtime. It is safe for
// concurrent use: every call creates its own tensors, and ONNX Runtime's
// dynamic sessions allow concurrent Run calls.
type Session struct {
	sess        *ort.DynamicAdvancedSession
	hasPosition bool
	output      string
	kind        OutputKind
	yesID, noID int
	padID       int
}

// SessionSpec names the ids the runtime needs besides the graph.
type SessionSpec struct {
	YesID, NoID int // read from full-vocabulary outputs
	PadID       int // written into padding positions (masked out)
}

// OpenSession loads path, checks its inputs and outputs against the I/O
// contract, and prepares it for runs. InitRuntime must have been called.
func OpenSession(path string, spec SessionSpec, cfg SessionConfig) (*Session, error) {
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
	s := &Session{yesID: spec.YesID, noID: spec.NoID, padID: spec.PadID}
	inputNames, err := s.checkInputs(ins)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	if err := s.pickOutput(outs); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	s.sess, err = openSession(path, inputNames, []string{s.output}, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Session) checkInputs(ins []ort.InputOutputInfo) ([]string, error) {
	var names []string
	var errs []error
	seen := map[string]bool{}
	for _, in := range ins {
		seen[in.Name] = true
		switch in.Name {
		case "input_ids", "attention_mask", "position_ids":
			if in.DataType != ort.TensorElementDataTypeInt64 || len(in.Dimensions) != 2 {
				errs = append(errs, fmt.Errorf("input %q is %v %v, want int64 [batch, seq]", in.Name, in.DataType, in.Dimensions))
			}
			s.hasPosition = s.hasPosition || in.Name == "position_ids"
			names = append(names, in.Name)
		default:
			errs = append(errs, fmt.Errorf("unsupported input %q (%v %v): rerankd feeds input_ids, attention_mask and position_ids only "+
				"(export without a KV cache)", in.Name, in.DataType, in.Dimensions))
		}
	}
	for _, need := range []string{"input_ids", "attention_mask"} {
		if !seen[need] {
			errs = append(errs, fmt.Errorf("missing input %q", need))
		}
	}
	return names, errors.Join(errs...)
}

func (s *Session) pickOutput(outs []ort.InputOutputInfo) error {
	if len(outs) == 0 {
		return errors.New("model has no outputs")
	}
	out := outs[0]
	if i := slices.IndexFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == "logits" }); i >= 0 {
		out = outs[i]
	}
	if out.DataType != ort.TensorElementDataTypeFloat {
		return fmt.Errorf("output %q is %v, want float32", out.Name, out.DataType)
	}
	kind, err := detectOutput(out.Name, out.Dimensions, s.yesID, s.noID)
	if err != nil {
		return err
	}
	s.output, s.kind = out.Name, kind
	return nil
}

// Kind reports the detected output layout.
func (s *Session) Kind() OutputKind { return s.kind }

// Logits runs one batch. seqs are unpadded token ids; rows are right-padded
// to the longest. A decoder has no token types: types must be nil
// (batching.Logiter). Cancelling ctx terminates a run in progress.
func (s *Session) Logits(ctx context.Context, seqs, types [][]int) ([]float32, error) {
	if err := batching.CheckNoTypes(types); err != nil {
		return nil, err
	}
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
	n := len(seqs) * width
	ids, mask := make([]int64, n), make([]int64, n)
	last := make([]int, len(seqs))
	for b, q := range seqs {
		row := b * width
		for j := range width {
			ids[row+j] = int64(s.padID)
		}
		for j, id := range q {
			ids[row+j], mask[row+j] = int64(id), 1
		}
		last[b] = len(q) - 1
	}
	shape := ort.NewShape(int64(len(seqs)), int64(width))
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			release(v)
		}
	}()
	for _, data := range [][]int64{ids, mask} {
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, t)
	}
	if s.hasPosition {
		pos := make([]int64, n)
		for i := range pos {
			pos[i] = int64(i % width)
		}
		t, err := ort.NewTensor(shape, pos)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := s.run(ctx, inputs, outputs); err != nil {
		return nil, err
	}
	defer release(outputs[0])
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output %q is %T, want a float32 tensor", s.output, outputs[0])
	}
	return extractLogits(s.kind, t.GetData(), t.GetShape(), last, s.yesID, s.noID)
}

// run calls ONNX Runtime, terminating the run if ctx ends first.
func (s *Session) run(ctx context.Context, inputs, outputs []ort.Value) error {
	return runCtx(ctx, s.sess, inputs, outputs)
}

// Close releases the session.
func (s *Session) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	return err
}
