package folder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
)

// TestConvertEncoder: a generated checkpoint of each encoder class is
// detected (--kind auto) and converted into the served layout, an
// embedding model keeping its pooling.
func TestConvertEncoder(t *testing.T) {
	for _, c := range []struct {
		family string
		embed  bool
		want   ModelKind
	}{{arch.FamilyXLMR, false, KindReranker}, {arch.FamilyBERT, false, KindReranker}, {arch.FamilyXLMR, true, KindEmbedding}, {arch.FamilyBERT, true, KindEmbedding}} {
		cfg := arch.TinyEncoder(c.family, c.embed)
		t.Run(cfg.Architectures[0], func(t *testing.T) {
			src, out := t.TempDir(), t.TempDir()
			pool := arch.Pooling{Mode: arch.PoolMean, Normalize: true}
			if err := WriteTestEncoderCheckpoint(src, cfg, 1, "BF16", pool); err != nil {
				t.Fatal(err)
			}
			if kind, why, err := DetectKind(src); err != nil || kind != c.want {
				t.Fatalf("DetectKind = %v (%s), %v; want %v", kind, why, err, c.want)
			}
			if err := Convert(src, out, BuildOptions{Quants: []onnx.Quant{onnx.QuantInt8}}); err != nil {
				t.Fatal(err)
			}
			got, err := onnx.ReadEncoderConfig(filepath.Join(out, onnx.ModelFile))
			if err != nil || got.Family() != c.family {
				t.Fatalf("graph config %+v, %v", got, err)
			}
			_, err = os.Stat(filepath.Join(out, onnx.QuantFile(onnx.ModelFile, onnx.QuantInt8)))
			if hasInt8 := err == nil; hasInt8 != !c.embed {
				t.Errorf("int8 variant present %v, want %v (rerankers only)", hasInt8, !c.embed)
			}
			if c.embed {
				if p, err := ReadEncoderPooling(out); err != nil || p != pool {
					t.Errorf("pooling %+v, %v; want %+v", p, err, pool)
				}
			}
			wrong := KindEmbedding
			if c.embed {
				wrong = KindReranker
			}
			if err := Convert(src, t.TempDir(), BuildOptions{Kind: wrong}); err == nil || !strings.Contains(err.Error(), "--kind") {
				t.Errorf("--kind %s: %v, want a refusal naming --kind", wrong, err)
			}
		})
	}
}

func TestReadEncoderPoolingRefuses(t *testing.T) {
	cases := []struct {
		name, pooling, want string
	}{
		{"two modes", `{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}`, "cls_token mean_tokens"},
		{"last token", `{"pooling_mode_lasttoken": true}`, "lasttoken"},
		{"missing", "", "1_Pooling/config.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.pooling != "" {
				if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(STPoolingFile)), []byte(c.pooling), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ReadEncoderPooling(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want it to mention %q", err, c.want)
			}
		})
	}
}
