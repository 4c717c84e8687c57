package model

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// TestGraphIOMatchesRuntime: the inputs and outputs read from the file are
// exactly what ONNX Runtime reports after building a session, for every
// graph this project writes (plain and shared-prefix, float32 and int8,
// each head, weights inline and external, and the embedder). The folders
// are other tests' fixtures: the quantised one (external) read for its
// float32 and int8 graphs, the inline logit and yes/no ones.
func TestGraphIOMatchesRuntime(t *testing.T) {
	if err := InitRuntime(testenv.ORTLib()); err != nil {
		t.Fatal(err)
	}
	emb := fixture.EmbeddingModel(t, arch.Tiny(), 3, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	dirs := []string{tinyQuantModel(t), tinyModel(t, onnx.HeadLogit, false), tinyModel(t, onnx.HeadYesNo, false), emb}
	want := 11
	if testing.Short() {
		dirs, want = dirs[:1], 6 // -short: the int8 folder's float32 and int8 graphs
	}
	n := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		for _, f := range files {
			if strings.Contains(filepath.Base(f), onnx.QuantInt8.String()+"-") {
				continue // the other quantised variants: the int8 graphs' inputs and outputs
			}
			n++
			t.Run(filepath.Base(dir)+"/"+filepath.Base(f), func(t *testing.T) {
				wantIn, wantOut, err := ort.GetInputOutputInfo(f)
				if err != nil {
					t.Fatal(err)
				}
				gotIn, gotOut, err := graphIO(f)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotIn, wantIn) || !reflect.DeepEqual(gotOut, wantOut) {
					t.Errorf("read from the file:\n in %v\n out %v\nONNX Runtime:\n in %v\n out %v", gotIn, gotOut, wantIn, wantOut)
				}
			})
		}
	}
	if n < want {
		t.Fatalf("only %d graphs compared, want at least %d", n, want)
	}
}

// TestGraphIOErrors: a file that is not an ONNX model is refused by name,
// before ONNX Runtime sees it.
func TestGraphIOErrors(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{"empty.onnx": {}, "text.onnx": []byte("not a model at all"), "truncated.onnx": {0x3a, 0x7f, 0x01}} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := graphIO(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
}
