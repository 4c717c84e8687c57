package onnx

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// minExternalBytes: initializers smaller than this (shape constants, norm
// gains of tiny models) stay inline even in external mode, as in the onnx
// Python package's convert_model_to_external_data.
const minExternalBytes = 1024

// extRef is a parsed TensorProto.external_data.
type extRef struct {
	location       string
	offset, length int64
}

// externalRef parses t's external_data entries, rejecting locations ORT
// would refuse (absolute or outside the model's folder).
func externalRef(t *onnxpb.TensorProto) (extRef, error) {
	r := extRef{length: -1}
	for _, e := range t.GetExternalData() {
		var err error
		switch e.GetKey() {
		case "location":
			r.location = e.GetValue()
		case "offset":
			r.offset, err = strconv.ParseInt(e.GetValue(), 10, 64)
		case "length":
			r.length, err = strconv.ParseInt(e.GetValue(), 10, 64)
		}
		if err != nil {
			return r, fmt.Errorf("initializer %s: external %s: %w", t.GetName(), e.GetKey(), err)
		}
	}
	if r.location == "" || filepath.IsAbs(r.location) || strings.HasPrefix(filepath.Clean(r.location), "..") {
		return r, fmt.Errorf("initializer %s: bad external location %q", t.GetName(), r.location)
	}
	if r.offset < 0 || r.length < 0 {
		return r, fmt.Errorf("initializer %s: external offset %d / length %d", t.GetName(), r.offset, r.length)
	}
	return r, nil
}

// extChunk is one tensor's bytes at its offset in the data file.
type extChunk struct {
	offset int64
	data   []byte
}

// externalize returns a copy of the initializer list in which every tensor
// of at least minExternalBytes refers to location at an aligned offset,
// plus the chunks to write there and the data file's size. The originals
// are not modified.
func externalize(inits []*onnxpb.TensorProto, location string, align int64) ([]*onnxpb.TensorProto, []extChunk, int64) {
	sizes := make([]int64, len(inits))
	for i, t := range inits {
		sizes[i] = int64(len(t.GetRawData()))
	}
	offsets, total := externalLayout(sizes, align)
	out := make([]*onnxpb.TensorProto, len(inits))
	var chunks []extChunk
	for i, t := range inits {
		if offsets[i] < 0 {
			out[i] = t
			continue
		}
		chunks = append(chunks, extChunk{offset: offsets[i], data: t.GetRawData()})
		out[i] = externalTensor(t, location, offsets[i], sizes[i])
	}
	return out, chunks, total
}

// externalLayout places tensors of the given byte sizes in a data file:
// each one of at least minExternalBytes at the next multiple of align (-1:
// stays inline), in order, and returns the file's size. Offsets are int64
// throughout, so a model over 4 GB (Qwen3-Reranker-8B in float32 is ~30
// GB) gets offsets past 2^32 that ONNX Runtime reads as written (decimal
// strings, parsed as int64).
func externalLayout(sizes []int64, align int64) ([]int64, int64) {
	offsets := make([]int64, len(sizes))
	var off int64
	for i, n := range sizes {
		if n < minExternalBytes {
			offsets[i] = -1
			continue
		}
		off = (off + align - 1) / align * align
		offsets[i] = off
		off += n
	}
	return offsets, off
}

// externalTensor is t without its bytes, referring to length bytes at
// offset in location.
func externalTensor(t *onnxpb.TensorProto, location string, offset, length int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{
		Name: t.Name, Dims: t.Dims, DataType: t.DataType, DocString: t.DocString,
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(location)},
			{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(offset, 10))},
			{Key: proto.String("length"), Value: proto.String(strconv.FormatInt(length, 10))},
		},
	}
}
