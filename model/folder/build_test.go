package folder

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// TestWriteAttentionForms: a reranker folder gets each shared-prefix
// graph's CPU attention form beside it (Attention nodes for the prefix and
// each of its AttentionFormBuckets in every layer but the last, the opset
// that defines them) unless NoAttentionForm, whose rewrite removes the
// forms left from before; a folder written with FuseAttention in Fusion
// has it in the shared-prefix graph itself (at AttentionBuckets) and no
// second form.
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
	perLayer := func(buckets int) int { return (1 + buckets) * (cfg.NumHiddenLayers - 1) }
	for _, c := range []struct {
		name      string
		o         BuildOptions
		formNodes int // Attention nodes in each .attn file (0: no such file)
		mainNodes int // in shared_prefix.onnx
	}{
		{"default", BuildOptions{}, perLayer(onnx.DefaultAttentionFormBuckets), 0},
		{"no attention form", BuildOptions{NoAttentionForm: true}, 0, 0},
		{"fusion has attention", BuildOptions{Fusion: onnx.FuseAttention}, 0, perLayer(onnx.DefaultAttentionBuckets)},
		{"form buckets", BuildOptions{AttentionFormBuckets: 4, AttentionBuckets: 3}, perLayer(4), 0},
	} {
		c.o.Tokenizer, c.o.Quants = testenv.TokenizerDir(), []onnx.Quant{onnx.QuantInt8}
		if err := WriteTestModel(dir, cfg, 3, c.o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, f := range forms {
			switch {
			case exists(f) != (c.formNodes > 0):
				t.Errorf("%s: %s exists %v, want %v", c.name, f, exists(f), c.formNodes > 0)
			case c.formNodes > 0:
				if n := attnNodes(f); n != c.formNodes {
					t.Errorf("%s: %s has %d Attention nodes, want %d", c.name, f, n, c.formNodes)
				}
			}
		}
		for _, f := range []string{onnx.SharedPrefixFile, int8Shared} {
			if n := attnNodes(f); n != c.mainNodes {
				t.Errorf("%s: %s has %d Attention nodes, want %d", c.name, f, n, c.mainNodes)
			}
		}
	}
}
