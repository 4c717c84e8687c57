package hf

import (
	"bytes"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// FuzzReadHeader feeds arbitrary files to the header parser: it must never
// panic, and whatever it accepts must describe tensors inside the file.
func FuzzReadHeader(f *testing.F) {
	for _, tt := range headerCases {
		f.Add(tt.file)
	}
	var valid bytes.Buffer
	WriteSafetensors(&valid, map[string]*arch.Tensor{
		"a": {Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}},
		"b": {Shape: []int{}, Data: []float32{5}},
	}, BF16, map[string]string{"format": "pt"})
	f.Add(valid.Bytes())
	f.Fuzz(func(t *testing.T, file []byte) {
		h, err := ReadHeader(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			return
		}
		dataLen := int64(len(file)) - h.DataOffset
		for name, info := range h.Tensors {
			if info.Begin < 0 || info.End > dataLen || info.End-info.Begin != int64(info.Len()*info.DType.Size()) {
				t.Fatalf("accepted tensor %q with offsets [%d, %d] in %d data bytes", name, info.Begin, info.End, dataLen)
			}
		}
	})
}
