package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// DataRange is one initializer's bytes in an external-data file.
type DataRange struct {
	File        string // path of the data file (the graph's folder joined with its location)
	Offset, Len int64
	Name        string // the initializer's name
	// GatherOnly: every node that reads the initializer is a Gather of
	// its rows (an embedding table): a run touches a few rows of it, not
	// the whole tensor.
	GatherOnly bool
}

// ExternalRanges lists the external-data ranges the graph file at path
// refers to, in file and offset order, without reading the data files:
// what a session built from the graph will map.
func ExternalRanges(path string) ([]DataRange, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	p := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	g := p.GetGraph()
	gather, other := map[string]bool{}, map[string]bool{}
	for _, n := range g.GetNode() {
		for i, in := range n.GetInput() {
			if n.GetOpType() == "Gather" && i == 0 {
				gather[in] = true
			} else {
				other[in] = true
			}
		}
	}
	dir := filepath.Dir(path)
	var out []DataRange
	for _, t := range g.GetInitializer() {
		if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			continue
		}
		ref, err := externalRef(t)
		if err != nil {
			return nil, fmt.Errorf("onnx: %s: %w", path, err)
		}
		out = append(out, DataRange{File: filepath.Join(dir, ref.location), Offset: ref.offset, Len: ref.length, Name: t.GetName(),
			GatherOnly: gather[t.GetName()] && !other[t.GetName()]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Offset < out[j].Offset
	})
	return out, nil
}
