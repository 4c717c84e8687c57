package onnx

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// Load reads dir/model.onnx and resolves external data into RawData, so
// the result looks like a freshly built Model. It exists to inspect saved
// models (metadata, round-trip tests); ORT loads the files itself.
func Load(dir string) (*Model, error) {
	return LoadGraph(filepath.Join(dir, ModelFile))
}

// LoadGraph is Load for any graph file of a folder (a variant such as
// model.int8.onnx); external data resolves against the file's folder.
func LoadGraph(path string) (*Model, error) {
	dir := filepath.Dir(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: load: %w", err)
	}
	p := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("onnx: load %s: %w", dir, err)
	}
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			_ = f.Close() // read-only: nothing to lose
		}
	}()
	for _, t := range p.GetGraph().GetInitializer() {
		if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			continue
		}
		ref, err := externalRef(t)
		if err != nil {
			return nil, fmt.Errorf("onnx: load %s: %w", dir, err)
		}
		f, ok := files[ref.location]
		if !ok {
			if f, err = os.Open(filepath.Join(dir, ref.location)); err != nil {
				return nil, fmt.Errorf("onnx: load: %w", err)
			}
			files[ref.location] = f
		}
		t.RawData = make([]byte, ref.length)
		if _, err := io.ReadFull(io.NewSectionReader(f, ref.offset, ref.length), t.RawData); err != nil {
			return nil, fmt.Errorf("onnx: load %s: initializer %s: %w", dir, t.GetName(), err)
		}
		t.DataLocation, t.ExternalData = nil, nil
	}
	return &Model{Proto: p, Storage: DefaultStorage()}, nil
}

// WeightBytes is the size of the initializer data the graph file at path
// uses, inline or external, without reading the external files: what a
// variant sharing a data file with others needs of it.
func WeightBytes(path string) (int64, error) {
	w, err := ReadWeightStorage(path)
	return w.Total(), err
}
