package folder

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
)

// TestConvertRefusesBadCheckpoint: convert refuses, naming the file and
// the field or tensor, a checkpoint whose weights hold NaN or infinity,
// whose sentence_bert_config.json max_seq_length is not a usable length,
// or whose Pooling word_embedding_dimension disagrees with the weights;
// nothing is written. A max_seq_length beyond the positions converts with
// a warning (it is held to them when served).
func TestConvertRefusesBadCheckpoint(t *testing.T) {
	bert := arch.TinyEncoder(arch.FamilyBERT, true)
	xlmr := arch.TinyEncoder(arch.FamilyXLMR, false)
	qwen := arch.Tiny()
	poison := func(v float32) func(map[string]*arch.Tensor) {
		return func(ts map[string]*arch.Tensor) {
			for _, name := range []string{"embeddings.word_embeddings.weight", arch.EmbedTokens} {
				if tt, ok := ts[name]; ok {
					tt.Data[7] = v
					return
				}
			}
			for _, tt := range ts { // any tensor
				tt.Data[len(tt.Data)-1] = v
				return
			}
		}
	}
	stFile := func(name, data string) func(string) error {
		return func(dir string) error {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			return os.WriteFile(path, []byte(data), 0o644)
		}
	}
	lastTok := func(dim int) string {
		return `{"word_embedding_dimension": ` + itoa(dim) + `, "pooling_mode_lasttoken": true}`
	}
	for _, c := range []struct {
		name   string
		enc    *arch.EncoderConfig // else the Qwen tiny config
		kind   ModelKind
		weight func(map[string]*arch.Tensor)
		file   func(string) error
		want   []string // all in the error; nil: converts
		warn   string
	}{
		{name: "encoder NaN weight", enc: &xlmr, weight: poison(float32(math.NaN())), want: []string{"model.safetensors", "holds NaN", "damaged"}},
		{name: "encoder +Inf weight", enc: &bert, weight: poison(float32(math.Inf(1))), want: []string{"model.safetensors", "holds +Inf"}},
		{name: "qwen reranker NaN weight", weight: poison(float32(math.NaN())), want: []string{"model.safetensors", "holds NaN"}},
		{name: "qwen embedding -Inf weight", kind: KindEmbedding, weight: poison(float32(math.Inf(-1))), want: []string{"model.safetensors", "holds -Inf"}},
		{name: "max_seq_length -5", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": -5}`), want: []string{STBertConfigFile, "max_seq_length -5"}},
		{name: "max_seq_length 0", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": 0}`), want: []string{STBertConfigFile, "max_seq_length 0"}},
		{name: "max_seq_length 1e12", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": 1e12}`), want: []string{STBertConfigFile, "max_seq_length 1e+12", "1..1048576"}},
		{name: "max_seq_length 7.5", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": 7.5}`), want: []string{STBertConfigFile, "max_seq_length 7.5"}},
		{name: "max_seq_length a string", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": "512"}`), want: []string{STBertConfigFile, "max_seq_length"}},
		{name: "sentence_bert_config not JSON", enc: &bert, file: stFile(STBertConfigFile, `max_seq_length=5`), want: []string{STBertConfigFile}},
		{name: "qwen embedding max_seq_length -5", kind: KindEmbedding, file: stFile(STBertConfigFile, `{"max_seq_length": -5}`), want: []string{STBertConfigFile, "max_seq_length -5"}},
		{name: "encoder word_embedding_dimension wrong", enc: &bert, file: stFile(STPoolingFile, `{"word_embedding_dimension": 7, "pooling_mode_mean_tokens": true}`),
			want: []string{"1_Pooling", "word_embedding_dimension 7 disagrees with the weights", "hidden size is " + itoa(bert.HiddenSize)}},
		{name: "encoder word_embedding_dimension not a number", enc: &bert, file: stFile(STPoolingFile, `{"word_embedding_dimension": "big", "pooling_mode_mean_tokens": true}`),
			want: []string{"1_Pooling", "word_embedding_dimension big"}},
		{name: "qwen embedding word_embedding_dimension wrong", kind: KindEmbedding, file: stFile(STPoolingFile, lastTok(qwen.HiddenSize+1)),
			want: []string{"1_Pooling", "word_embedding_dimension " + itoa(qwen.HiddenSize+1) + " disagrees"}},
		{name: "max_seq_length beyond the positions", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": 100000}`), warn: "beyond the model's"},
		{name: "max_seq_length in range", enc: &bert, file: stFile(STBertConfigFile, `{"max_seq_length": 64, "do_lower_case": false}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := t.TempDir()
			out := filepath.Join(t.TempDir(), "out")
			var warns []string
			o := BuildOptions{Kind: c.kind, Warn: func(s string) { warns = append(warns, s) }}
			if c.enc != nil {
				w, err := arch.RandomEncoder(*c.enc, 1)
				if err != nil {
					t.Fatal(err)
				}
				if c.weight != nil {
					c.weight(w.Tensors)
				}
				if err := hf.WriteEncoderCheckpoint(src, w, "F32"); err != nil {
					t.Fatal(err)
				}
				if !c.enc.Classifier() {
					if err := writeEncoderST(src, c.enc.HiddenSize, arch.Pooling{Mode: arch.PoolMean}); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				cfg := qwen
				if c.kind == KindEmbedding {
					cfg = qwen.Backbone()
				}
				w, err := arch.Random(cfg, 1)
				if err != nil {
					t.Fatal(err)
				}
				if c.weight != nil {
					c.weight(w.Tensors)
				}
				if err := hf.WriteCheckpoint(src, w, "F32", 1); err != nil {
					t.Fatal(err)
				}
			}
			if c.file != nil {
				if err := c.file(src); err != nil {
					t.Fatal(err)
				}
			}
			err := Convert(src, out, o)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, err := os.Stat(filepath.Join(out, STBertConfigFile)); err != nil {
					t.Errorf("%s not carried into the folder: %v", STBertConfigFile, err)
				}
				if c.warn != "" && !strings.Contains(strings.Join(warns, "\n"), c.warn) {
					t.Errorf("warnings %q, want one with %q", warns, c.warn)
				}
				return
			}
			if err == nil {
				t.Fatal("converted; want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, serr := os.Stat(filepath.Join(out, "model.onnx")); serr == nil {
				t.Errorf("model.onnx written despite the refusal")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
