package onnx

import (
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// TestReadWeightStorage: the scan of a saved graph finds every initializer
// byte, inside the protobuf for an inline save and in the data file for
// an encoder's default storage (small constants stay inline), without
// reading the data file; WeightBytes is their sum either way.
func TestReadWeightStorage(t *testing.T) {
	w, err := arch.RandomEncoder(arch.TinyEncoder(arch.FamilyBERT, false), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		storage  Storage
		external bool
	}{
		{"inline", DefaultStorage(), false},
		{"encoder storage", EncoderStorage(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := NewEncoderOptions()
			opts.Storage = tc.storage
			m, err := BuildEncoder(w, opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := m.Save(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, ModelFile)
			got, err := ReadWeightStorage(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := m.InitializerBytes(); got.Total() != want {
				t.Errorf("total %d (inline %d, external %d), want %d", got.Total(), got.Inline, got.External, want)
			}
			if tc.external && (got.External == 0 || got.Inline >= got.External/10) || !tc.external && got.External != 0 {
				t.Errorf("inline %d, external %d bytes: want the weights %s", got.Inline, got.External, map[bool]string{true: "external", false: "inline"}[tc.external])
			}
			n, err := WeightBytes(path)
			if err != nil || n != got.Total() {
				t.Errorf("WeightBytes %d (%v), want %d", n, err, got.Total())
			}
		})
	}
}
