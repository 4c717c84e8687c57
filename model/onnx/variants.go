package onnx

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// SaveWith writes m to dir like Save and, next to it, each model of extra
// under its file name (e.g. SharedPrefixFile). When m's weights go to an
// external data file, every graph refers to the same model.onnx.data: an
// initializer of the same name is stored once, so variants of one model cost
// a few hundred KB of graph on disk, not another copy of the weights (and
// ORT memory-maps the shared file). Initializers sharing a name must hold
// the same bytes. Inline models stay self-contained files. As with Save,
// every file is written to a temporary name and renamed into place, data
// first.
func (m *Model) SaveWith(dir string, extra map[string]*Model) error {
	if len(extra) == 0 {
		return m.Save(dir)
	}
	names := make([]string, 0, len(extra))
	for name, x := range extra {
		if name == ModelFile || name == DataFile || filepath.Base(name) != name || name == "" {
			return fmt.Errorf("onnx: save: bad variant file name %q", name)
		}
		if err := x.Check(); err != nil {
			return fmt.Errorf("onnx: save %s: invalid model: %w", name, err)
		}
		names = append(names, name)
	}
	slices.Sort(names) // deterministic data layout
	if err := m.Storage.Validate(); err != nil {
		return fmt.Errorf("onnx: save: %w", err)
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("onnx: save: invalid model: %w", err)
	}
	total := m.InitializerBytes()
	external := m.Storage.ForceExternal || total > m.Storage.ExternalThreshold || total > maxInline
	if !external {
		for _, name := range names {
			if extra[name].InitializerBytes() > maxInline {
				return fmt.Errorf("onnx: save %s: initializers too large to store inline", name)
			}
			data, err := proto.MarshalOptions{Deterministic: true}.Marshal(extra[name].Proto)
			if err != nil {
				return fmt.Errorf("onnx: save %s: marshal: %w", name, err)
			}
			if err := writeAtomic(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
				return fmt.Errorf("onnx: save: %w", err)
			}
		}
		return m.Save(dir)
	}

	// One data file for the union of the large initializers, by name.
	all := []*Model{m}
	for _, name := range names {
		all = append(all, extra[name])
	}
	byName := map[string]*onnxpb.TensorProto{}
	var union []*onnxpb.TensorProto
	for _, x := range all {
		for _, t := range x.Proto.GetGraph().GetInitializer() {
			if len(t.GetRawData()) < minExternalBytes {
				continue // stays inline in its own graph; small constants' names are per graph
			}
			if prev, ok := byName[t.GetName()]; ok {
				if !sameTensor(prev, t) {
					return fmt.Errorf("onnx: save: initializer %s differs between graphs", t.GetName())
				}
				continue
			}
			byName[t.GetName()] = t
			union = append(union, t)
		}
	}
	ext, chunks, _ := externalize(union, DataFile, m.Storage.Alignment)
	extByName := make(map[string]*onnxpb.TensorProto, len(ext))
	for _, t := range ext {
		extByName[t.GetName()] = t
	}
	headers := make([][]byte, len(all))
	for i, x := range all {
		g := x.Proto.GetGraph()
		orig := g.Initializer
		g.Initializer = nil // clone without copying gigabytes of weights
		clone := proto.Clone(x.Proto).(*onnxpb.ModelProto)
		g.Initializer = orig
		for _, t := range orig {
			if e, ok := extByName[t.GetName()]; ok && len(t.GetRawData()) >= minExternalBytes {
				t = e
			}
			clone.Graph.Initializer = append(clone.Graph.Initializer, t)
		}
		var err error
		if headers[i], err = (proto.MarshalOptions{Deterministic: true}).Marshal(clone); err != nil {
			return fmt.Errorf("onnx: save: marshal: %w", err)
		}
	}
	paths := []string{filepath.Join(dir, ModelFile)}
	for _, name := range names {
		paths = append(paths, filepath.Join(dir, name))
	}
	dataPath := filepath.Join(dir, DataFile)
	// Data first: no new graph ever points at an old data file.
	files := []atomicfile.File{fileAt(dataPath, func(w io.Writer) error { return writeChunks(w, chunks) })}
	for i, p := range paths {
		files = append(files, fileAt(p, func(w io.Writer) error { _, err := w.Write(headers[i]); return err }))
	}
	if err := atomicfile.WriteAll(files...); err != nil {
		return fmt.Errorf("onnx: save: %w", err)
	}
	return nil
}

// sameTensor reports whether two initializers hold the same data (the same
// backing array when built from one arch.Weights, else equal bytes).
func sameTensor(a, b *onnxpb.TensorProto) bool {
	ra, rb := a.GetRawData(), b.GetRawData()
	if a.GetDataType() != b.GetDataType() || !slices.Equal(a.GetDims(), b.GetDims()) || len(ra) != len(rb) {
		return false
	}
	if len(ra) == 0 || &ra[0] == &rb[0] {
		return true
	}
	return string(ra) == string(rb)
}
