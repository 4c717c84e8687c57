package folder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// TestWriteAttentionForms: a reranker folder gets each shared-prefix
// graph's CPU attention form beside it (Attention nodes, the opset that
// defines them) unless NoAttentionForm, whose rewrite removes the forms
// left from before; a folder written with FuseAttention in Fusion has it
// in the shared-prefix graph itself and no second form.
func TestWriteAttentionForms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	cfg := arch.Tiny()
	attnNodes := func(name string) int {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, node := range m.GetGraph().GetNode() {
			if node.GetOpType() == "Attention" {
				n++
			}
		}
		if n > 0 && m.GetOpsetImport()[0].GetVersion() != onnx.AttentionOpset {
			t.Errorf("%s: Attention nodes under opset %d", name, m.GetOpsetImport()[0].GetVersion())
		}
		return n
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	int8Shared := onnx.QuantFile(onnx.SharedPrefixFile, onnx.QuantInt8)
	forms := []string{onnx.AttentionFormFile(onnx.SharedPrefixFile), onnx.AttentionFormFile(int8Shared)}
	for _, c := range []struct {
		name   string
		o      BuildOptions
		forms  bool // the .attn files exist
		inMain bool // shared_prefix.onnx has Attention nodes
	}{
		{"default", BuildOptions{}, true, false},
		{"no attention form", BuildOptions{NoAttentionForm: true}, false, false},
		{"fusion has attention", BuildOptions{Fusion: onnx.FuseAttention}, false, true},
		{"default again", BuildOptions{}, true, false},
	} {
		c.o.Tokenizer, c.o.Quants = testenv.TokenizerDir(), []onnx.Quant{onnx.QuantInt8}
		if err := WriteTestModel(dir, cfg, 3, c.o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, f := range forms {
			if exists(f) != c.forms {
				t.Errorf("%s: %s exists %v, want %v", c.name, f, exists(f), c.forms)
			} else if c.forms && attnNodes(f) == 0 {
				t.Errorf("%s: %s has no Attention node", c.name, f)
			}
		}
		for _, f := range []string{onnx.SharedPrefixFile, int8Shared} {
			if got := attnNodes(f) > 0; got != c.inMain {
				t.Errorf("%s: %s has Attention nodes %v, want %v", c.name, f, got, c.inMain)
			}
		}
	}
}
