package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
)

// TestTestModelEmbedding: `testmodel --kind embedding` writes a folder in
// the Qwen3-Embedding layout that opens as an embedding model, and
// `convert --kind embedding` reproduces it from a safetensors checkpoint.
// (ORT against the reference pass is model's test.)
func TestTestModelEmbedding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "embed")
	if code, _, errs := runCLI(t, "testmodel", "--kind", "embedding", "--size", "tiny", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	for _, f := range []string{"model.onnx", "config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json", "config_sentence_transformers.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	o := model.DefaultEmbedderOptions()
	o.RuntimeLib = testenv.ORTLib()
	e, err := model.OpenEmbedder(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close() //nolint:errcheck // test cleanup
	v, err := e.Embed(context.Background(), []string{"Caroline went to the support group", "Melanie painted a sunset"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || len(v[0]) != arch.Tiny().HiddenSize || e.Dim() != len(v[0]) || v[0][0] == v[1][0] {
		t.Fatalf("vectors %v", v)
	}
	// The same weights saved as a Qwen3Model safetensors checkpoint (bare
	// names) convert to the same folder.
	w, err := arch.Random(arch.Tiny().Backbone(), 1)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	tensors := map[string]*arch.Tensor{}
	for name, tensor := range w.Tensors {
		tensors[strings.TrimPrefix(name, "model.")] = tensor
	}
	if err := arch.WriteConfig(filepath.Join(src, hf.ConfigFile), arch.Tiny()); err != nil {
		t.Fatal(err)
	}
	if err := hf.SaveSafetensors(filepath.Join(src, hf.SingleWeights), tensors, hf.F32, nil); err != nil {
		t.Fatal(err)
	}
	conv := filepath.Join(t.TempDir(), "conv")
	if code, _, errs := runCLI(t, "convert", "--from", src, "--out", conv, "--kind", "embedding"); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	// Same weights, same options: the very same files.
	files := []string{"model.onnx", "config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json", "config_sentence_transformers.json"}
	sameFiles(t, dir, conv, files)

	// The checkpoint as a hub release with its sentence-transformers files:
	// the download brings them, so --kind auto knows it is an embedding
	// model (config.json alone says Qwen3ForCausalLM, like a reranker).
	for _, f := range files[3:] {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	serveHub(t, "test/tiny-embedding", src)
	hub := filepath.Join(t.TempDir(), "hub")
	if code, _, errs := runCLI(t, "convert", "--from", "test/tiny-embedding", "--out", hub); code != 0 {
		t.Fatalf("convert from the hub: %s", errs)
	}
	sameFiles(t, dir, hub, files) // a reranker conversion would differ in model.onnx and lack modules.json
}

// sameFiles fails t for each of files that differs between folders a and b.
func sameFiles(t *testing.T, a, b string, files []string) {
	t.Helper()
	for _, f := range files {
		x, errA := os.ReadFile(filepath.Join(a, f))
		y, errB := os.ReadFile(filepath.Join(b, f))
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s and %s (%v, %v)", f, a, b, errA, errB)
		}
	}
}

func TestEmbeddingCLIErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"testmodel", "--out", "/tmp/x", "--kind", "encoder"}, "--kind"},
		{[]string{"testmodel", "--out", "/tmp/x", "--kind", "auto"}, "--kind"},
		{[]string{"convert", "--from", "/tmp", "--out", "/tmp/x", "--kind", "encoder"}, "--kind"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errs, c.want)
		}
	}
}
