package model

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// FloatGraph runs a graph of one float32 input and one float32 output on
// tensors allocated once, with a model's session settings: what a
// measurement of the runtime itself needs (rerankd-bench bench's MatMul peak
// meter), without allocation in the timed loop. Not safe for concurrent
// Run calls: they share the tensors.
type FloatGraph struct {
	sess    *ort.DynamicAdvancedSession
	in, out *ort.Tensor[float32]
}

// OpenFloatGraph loads path and binds x, of shape inShape, to its input
// named input and a tensor of outShape to its output named output.
// InitRuntime must have been called.
func OpenFloatGraph(path, input, output string, x []float32, inShape, outShape []int64, cfg SessionConfig) (*FloatGraph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !ort.IsInitialized() {
		return nil, errors.New("onnx runtime not initialised: call InitRuntime first")
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	defer release(opts)
	g := &FloatGraph{}
	if g.sess, err = ort.NewDynamicAdvancedSession(path, []string{input}, []string{output}, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if g.in, err = ort.NewTensor(ort.NewShape(inShape...), x); err == nil {
		g.out, err = ort.NewEmptyTensor[float32](ort.NewShape(outShape...))
	}
	if err != nil {
		_ = g.Close() // the tensor error is what matters
		return nil, err
	}
	return g, nil
}

// Run runs the graph once on the bound tensors.
func (g *FloatGraph) Run() error { return g.sess.Run([]ort.Value{g.in}, []ort.Value{g.out}) }

// Close releases the session and tensors.
func (g *FloatGraph) Close() error {
	var err error
	if g.sess != nil {
		err = g.sess.Destroy()
		g.sess = nil
	}
	for _, t := range []*ort.Tensor[float32]{g.in, g.out} {
		if t != nil {
			_ = t.Destroy()
		}
	}
	g.in, g.out = nil, nil
	return err
}
