package onnx

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// WeightStorage is where a graph file keeps its initializer data: inside
// the protobuf (Inline) or in external data files (External), in bytes.
type WeightStorage struct {
	Inline, External int64
}

// Total is every initializer byte the graph uses.
func (w WeightStorage) Total() int64 { return w.Inline + w.External }

// Fields of TensorProto that hold inline data (raw_data and the typed
// repeated fields, which protobuf packs as one length-delimited field),
// and its external_data.
const (
	fieldTensorFloatData    = 4
	fieldTensorInt32Data    = 5
	fieldTensorInt64Data    = 7
	fieldTensorRawData      = 9
	fieldTensorDoubleData   = 10
	fieldTensorUint64Data   = 11
	fieldTensorExternalData = 13
)

// ReadWeightStorage reports where the graph file at path keeps its
// weights, without copying them: the file is mapped and only the
// initializers' field headers are read (inline data is skipped by its
// length; external tensors, a few hundred bytes each, are decoded). The
// external data files are not opened.
func ReadWeightStorage(path string) (WeightStorage, error) {
	raw, release, err := mapFile(path)
	if err != nil {
		return WeightStorage{}, fmt.Errorf("onnx: %w", err)
	}
	defer release()
	var w WeightStorage
	err = eachField(raw, func(num protowire.Number, graph []byte) error {
		if num != fieldModelGraph {
			return nil
		}
		return eachField(graph, func(num protowire.Number, t []byte) error {
			if num != fieldGraphInitializer {
				return nil
			}
			var inline int64
			external := false
			err := eachField(t, func(num protowire.Number, b []byte) error {
				switch num {
				case fieldTensorFloatData, fieldTensorInt32Data, fieldTensorInt64Data,
					fieldTensorRawData, fieldTensorDoubleData, fieldTensorUint64Data:
					inline += int64(len(b))
				case fieldTensorExternalData:
					external = true
				}
				return nil
			})
			if err != nil || !external {
				w.Inline += inline
				return err
			}
			tp := &onnxpb.TensorProto{}
			if err := proto.Unmarshal(t, tp); err != nil {
				return err
			}
			ref, err := externalRef(tp)
			if err != nil {
				return err
			}
			w.External += ref.length
			return nil
		})
	})
	if err != nil {
		return WeightStorage{}, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return w, nil
}
