package onnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// TestExternalRanges: every external initializer of the graphs is listed
// once, inside its data file, in offset order; only the embedding table
// is read by Gather alone; the sizes add up to WeightBytes where every
// weight is external.
func TestExternalRanges(t *testing.T) {
	dir := fixture.Model(t, arch.Tiny(), 7, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), ForceExternal: true,
		Quants: []onnx.Quant{onnx.QuantInt8}})
	st, err := os.Stat(filepath.Join(dir, onnx.DataFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{onnx.ModelFile, onnx.SharedPrefixFile, onnx.QuantFile(onnx.ModelFile, onnx.QuantInt8)} {
		t.Run(g, func(t *testing.T) {
			path := filepath.Join(dir, g)
			rs, err := onnx.ExternalRanges(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 0 {
				t.Fatal("no external ranges in a graph written with external data")
			}
			var sum int64
			gatherOnly := 0
			for i, r := range rs {
				if r.File != filepath.Join(dir, onnx.DataFile) || r.Offset < 0 || r.Len <= 0 || r.Offset+r.Len > st.Size() {
					t.Errorf("range %d %+v: outside %s (%d bytes)", i, r, onnx.DataFile, st.Size())
				}
				if i > 0 && r.Offset < rs[i-1].Offset+rs[i-1].Len {
					t.Errorf("range %d %+v overlaps or precedes %+v", i, r, rs[i-1])
				}
				if r.GatherOnly {
					gatherOnly++
				}
				sum += r.Len
			}
			if gatherOnly != 1 {
				t.Errorf("%d ranges read by Gather alone, want 1 (the embedding table)", gatherOnly)
			}
			total, err := onnx.WeightBytes(path)
			if err != nil {
				t.Fatal(err)
			}
			if sum > total || sum < total*9/10 {
				t.Errorf("ranges sum to %d bytes; WeightBytes %d (inline tensors are small)", sum, total)
			}
		})
	}
	if _, err := onnx.ExternalRanges(filepath.Join(dir, "missing.onnx")); err == nil {
		t.Error("missing graph: no error")
	}
}
