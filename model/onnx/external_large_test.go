package onnx

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// TestExternalLayoutPast4GB: the float32 tensors of Qwen3-Reranker-8B's
// dimensions (~30 GB, never allocated: only their sizes) are laid out at
// aligned, non-overlapping int64 offsets, many past 2^32; the external_data
// entries written for the last one parse back to the same offset and
// length.
func TestExternalLayoutPast4GB(t *testing.T) {
	shapes := arch.Qwen3Reranker8B().Shapes()
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	slices.Sort(names)
	sizes := make([]int64, len(names))
	var sum int64
	for i, n := range names {
		sizes[i] = 4
		for _, d := range shapes[n] {
			sizes[i] *= int64(d)
		}
		sum += sizes[i]
	}
	const align = 4096
	offsets, total := externalLayout(append(sizes, 16), align) // and one inline constant
	if offsets[len(offsets)-1] != -1 {
		t.Errorf("a 16-byte tensor was placed at %d, want inline", offsets[len(offsets)-1])
	}
	past, end, placed := 0, int64(0), int64(0)
	for i, n := range sizes {
		off := offsets[i]
		if off == -1 {
			if n >= minExternalBytes {
				t.Fatalf("%s (%d bytes) left inline", names[i], n)
			}
			continue
		}
		if off%align != 0 || off < end {
			t.Fatalf("%s at %d: unaligned or overlapping the previous end %d", names[i], off, end)
		}
		end = off + n
		placed += n
		if off > 1<<32 {
			past++
		}
	}
	if total != end || total < placed || placed < sum-1<<20 || total <= 1<<32 || past == 0 {
		t.Fatalf("total %d (external tensors %d of %d bytes), %d tensors past 2^32", total, placed, sum, past)
	}
	last := len(sizes) - 1
	ref, err := externalRef(externalTensor(&onnxpb.TensorProto{Name: proto.String(names[last])}, DataFile, offsets[last], sizes[last]))
	if err != nil || ref.offset != offsets[last] || ref.length != sizes[last] || ref.location != DataFile {
		t.Errorf("external ref %+v, %v; want offset %d length %d", ref, err, offsets[last], sizes[last])
	}
	if ref.offset <= 1<<32 {
		t.Errorf("last offset %d is not past 2^32", ref.offset)
	}
}
