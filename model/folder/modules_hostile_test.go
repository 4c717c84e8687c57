package folder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// TestReadEncoderPoolingModules: a sentence-transformers Dense module is
// refused by name (ignoring it would serve other embeddings than the
// model's), and a Pooling module path outside the folder is refused.
func TestReadEncoderPoolingModules(t *testing.T) {
	const pool = `{"word_embedding_dimension": 32, "pooling_mode_cls_token": true}`
	tf := `{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"}`
	pl := `{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}`
	for _, c := range []struct{ name, modules, want string }{
		{"Dense module", `[` + tf + `,` + pl + `,{"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"}]`, `module "2_Dense" (sentence_transformers.models.Dense) is not supported`},
		{"Pooling outside the folder", `[` + tf + `,{"idx":1,"name":"1","path":"../../outside","type":"sentence_transformers.models.Pooling"}]`, "outside the model folder"},
		{"plain", `[` + tf + `,` + pl + `]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string]string{STPoolingFile: pool, STModulesFile: c.modules} {
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadEncoderPooling(dir)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestConvertEncoderRefusesTokenizer: convert refuses a tokenizer.json
// that is not JSON, before writing a folder serve could not run.
func TestConvertEncoderRefusesTokenizer(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, false)
	src := t.TempDir()
	if err := WriteTestEncoderCheckpoint(src, cfg, 1, "F32", arch.Pooling{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "tokenizer.json"), []byte("this is not JSON"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Convert(src, t.TempDir(), BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("non-JSON tokenizer.json: %v", err)
	}
}
