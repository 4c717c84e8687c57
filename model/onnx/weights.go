package onnx

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// HeadDiffName is the initializer holding head[yes] - head[no] in
// HeadLogit graphs.
const HeadDiffName = "rerankd.head_diff"

// Weights reads back the architecture and weights of a model built by
// BuildReranker (the metadata says which), plus the folded yes/no head
// vector. The reference engine runs these, so a folder's two engines use
// the very same numbers. Models from other exporters have no rerankd
// metadata and are refused.
func (m *Model) Weights() (*arch.Weights, []float32, error) {
	if k, _ := m.Meta(MetaKind); k == KindEmbedding {
		return nil, nil, errors.New("onnx: this is an embedding model (no reranker head); open it with model.OpenEmbedder")
	}
	w, inits, err := m.readWeights()
	if err != nil {
		return nil, nil, err
	}
	cfg := w.Config
	if t, ok := inits[HeadDiffName]; ok {
		head, err := floats(t)
		if err != nil {
			return nil, nil, fmt.Errorf("onnx: %w", err)
		}
		return w, head, nil
	}
	yes, errY := metaInt(m, MetaYesID)
	no, errN := metaInt(m, MetaNoID)
	if err := errors.Join(errY, errN); err != nil {
		return nil, nil, fmt.Errorf("onnx: %w", err)
	}
	if !cfg.TieWordEmbeddings {
		t, ok := inits[arch.LMHead]
		if !ok {
			return nil, nil, fmt.Errorf("onnx: no %s and no %s initializer", HeadDiffName, arch.LMHead)
		}
		want := cfg.Shapes()[arch.LMHead]
		if got := t.GetDims(); len(got) != 2 || got[0] != int64(want[0]) || got[1] != int64(want[1]) {
			return nil, nil, fmt.Errorf("onnx: initializer %s has dims %v, want %v", arch.LMHead, got, want)
		}
		data, err := floats(t)
		if err != nil {
			return nil, nil, fmt.Errorf("onnx: %w", err)
		}
		w.Tensors[arch.LMHead] = &arch.Tensor{Shape: want, Data: data}
	}
	head, err := w.HeadDiff(yes, no)
	return w, head, err
}

// readWeights decodes the architecture recorded in the metadata and every
// backbone tensor it names from the initializers, checked; it also returns
// the initializers by name for head lookups. The output head is not read
// here: a HeadLogit graph of an untied checkpoint stores only the folded
// yes-no difference (HeadDiffName), never lm_head.weight, so requiring
// every tensor of cfg.Shapes would refuse it; Weights reads lm_head itself
// when a graph layout keeps it.
func (m *Model) readWeights() (*arch.Weights, map[string]*onnxpb.TensorProto, error) {
	cfgJSON, ok := m.Meta(MetaConfig)
	if !ok {
		return nil, nil, errors.New("onnx: model has no rerankd.config metadata (not written by rerankd); " +
			"the reference engine needs a model from `rerankd-bench testmodel` or `rerankd convert`")
	}
	var cfg arch.Config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return nil, nil, fmt.Errorf("onnx: rerankd.config metadata: %w", err)
	}
	inits := m.initializers()
	tensors, err := readTensors(inits, cfg.Backbone().Shapes())
	if err != nil {
		return nil, nil, err
	}
	w := &arch.Weights{Config: cfg, Tensors: tensors}
	if err := w.CheckBackbone(); err != nil {
		return nil, nil, fmt.Errorf("onnx: %w", err)
	}
	return w, inits, nil
}

func metaInt(m *Model, key string) (int, error) {
	s, ok := m.Meta(key)
	if !ok {
		return 0, fmt.Errorf("metadata %s missing", key)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("metadata %s: %w", key, err)
	}
	return v, nil
}

// floats decodes a float32 initializer stored inline (raw or typed data).
func floats(t *onnxpb.TensorProto) ([]float32, error) {
	if t.GetDataType() != int32(onnxpb.TensorProto_FLOAT) {
		return nil, fmt.Errorf("initializer %s has type %d, want float32", t.GetName(), t.GetDataType())
	}
	n := int64(1)
	for _, d := range t.GetDims() {
		n *= d
	}
	if fd := t.GetFloatData(); len(fd) > 0 {
		if int64(len(fd)) != n {
			return nil, fmt.Errorf("initializer %s: %d values for dims %v", t.GetName(), len(fd), t.GetDims())
		}
		return fd, nil
	}
	raw := t.GetRawData()
	if int64(len(raw)) != 4*n {
		return nil, fmt.Errorf("initializer %s: %d bytes for dims %v", t.GetName(), len(raw), t.GetDims())
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// initializers indexes the graph's initializers by name.
func (m *Model) initializers() map[string]*onnxpb.TensorProto {
	inits := map[string]*onnxpb.TensorProto{}
	for _, t := range m.Proto.GetGraph().GetInitializer() {
		inits[t.GetName()] = t
	}
	return inits
}

// readTensors reads the initializers that shapes names, at those shapes,
// reporting every one that is missing or unreadable.
func readTensors(inits map[string]*onnxpb.TensorProto, shapes map[string][]int) (map[string]*arch.Tensor, error) {
	tensors := make(map[string]*arch.Tensor, len(shapes))
	var errs []error
	for name, shape := range shapes {
		t, ok := inits[name]
		if !ok {
			errs = append(errs, fmt.Errorf("missing initializer %s", name))
			continue
		}
		data, err := floats(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tensors[name] = &arch.Tensor{Shape: shape, Data: data}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return tensors, nil
}
