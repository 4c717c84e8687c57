package folder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
)

// TestRandomMarker: every folder the generator writes carries the
// random-weights marker, Convert carries it into its output, a folder
// without one is not marked, and a marker that does not parse is an error
// (never read as trained weights).
func TestRandomMarker(t *testing.T) {
	ckpt, conv, emb := t.TempDir(), t.TempDir(), t.TempDir()
	if err := WriteTestEncoderCheckpoint(ckpt, arch.TinyEncoder(arch.FamilyBERT, true), 3, "F32", arch.Pooling{Mode: arch.PoolCLS}); err != nil {
		t.Fatal(err)
	}
	if err := Convert(ckpt, conv, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTestEmbeddingModel(emb, arch.Tiny(), 3, BuildOptions{Tokenizer: testenv.TokenizerDir()}); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"encoder checkpoint": ckpt, "converted": conv, "qwen embedding": emb} {
		if random, err := RandomWeights(dir); err != nil || !random {
			t.Errorf("%s: marked %v, %v", name, random, err)
		}
	}
	plain := t.TempDir()
	if random, err := RandomWeights(plain); err != nil || random {
		t.Errorf("no marker: %v, %v", random, err)
	}
	if err := os.WriteFile(filepath.Join(plain, MarkerFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RandomWeights(plain); err == nil || !strings.Contains(err.Error(), MarkerFile) {
		t.Errorf("garbage marker: %v, want an error naming %s", err, MarkerFile)
	}
}
