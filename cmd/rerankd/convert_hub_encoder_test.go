package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model"
)

// TestConvertEncoderFromHub: every encoder class rerankd serves converts
// from a hub repo (the local fake hub) laid out with the file names the
// published repo has, as remembered here: no network can check them. The
// files rerankd does not read (PyTorch and TensorFlow weights, ONNX
// exports, the slow tokenizers' vocab.txt and sentencepiece.bpe.model,
// BGE-M3's sparse and ColBERT heads) are listed by the hub but never
// downloaded, and the converted model scores or embeds exactly as the same
// checkpoint converted from its folder.
func TestConvertEncoderFromHub(t *testing.T) {
	unused := func(names ...string) []string { return names }
	for _, c := range []struct {
		repo, arch, kind, tokenizer string
		unused                      []string
	}{
		{"BAAI/bge-reranker-v2-m3", "xlmr", "reranker", "unigram/xlmr-current.json",
			unused("sentencepiece.bpe.model", "special_tokens_map.json")},
		{"BAAI/bge-reranker-base", "xlmr", "reranker", "unigram/xlmr-roberta.json",
			unused("pytorch_model.bin", "sentencepiece.bpe.model", "special_tokens_map.json", "onnx/model.onnx")},
		{"cross-encoder/ms-marco-MiniLM-L-6-v2", "bert", "reranker", "wordpiece/bert-uncased.json",
			unused("pytorch_model.bin", "vocab.txt", "special_tokens_map.json", "onnx/model.onnx", "openvino/openvino_model.bin")},
		{"BAAI/bge-m3", "xlmr", "embedding", "unigram/xlmr-current.json",
			unused("pytorch_model.bin", "colbert_linear.pt", "sparse_linear.pt", "sentencepiece.bpe.model", "onnx/model.onnx")},
		{"sentence-transformers/all-MiniLM-L6-v2", "bert", "embedding", "wordpiece/bert-uncased.json",
			unused("pytorch_model.bin", "vocab.txt", "data_config.json", "rust_model.ot", "tf_model.h5", "onnx/model.onnx")},
	} {
		t.Run(c.repo, func(t *testing.T) {
			ckpt := filepath.Join(t.TempDir(), "ckpt")
			tok := filepath.Join("..", "..", "tokenizer", "testdata", filepath.FromSlash(c.tokenizer))
			if code, _, errs := runCLI(t, "testmodel", "--arch", c.arch, "--kind", c.kind, "--out", ckpt, "--tokenizer", tok); code != 0 {
				t.Fatalf("testmodel: %s", errs)
			}
			for _, name := range c.unused {
				p := filepath.Join(ckpt, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("not read by rerankd"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.kind == "embedding" {
				// The input limit sentence-transformers cuts at: read, so
				// fetched and carried into the converted folder.
				if err := os.WriteFile(filepath.Join(ckpt, "sentence_bert_config.json"), []byte(`{"max_seq_length": 40, "do_lower_case": false}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			serveHub(t, c.repo, ckpt)
			cache := os.Getenv("RERANKD_CACHE")
			hub, local := filepath.Join(t.TempDir(), "hub"), filepath.Join(t.TempDir(), "local")
			if code, _, errs := runCLI(t, "convert", "--from", c.repo, "--out", hub); code != 0 {
				t.Fatalf("convert --from %s: %s", c.repo, errs)
			}
			if code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", local); code != 0 {
				t.Fatalf("convert local: %s", errs)
			}
			var fetched []string // the repo's files in the download cache
			_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					fetched = append(fetched, filepath.ToSlash(p))
				}
				return err
			})
			hasSuffix := func(name string) bool {
				return slices.ContainsFunc(fetched, func(p string) bool { return strings.HasSuffix(p, "/"+name) })
			}
			if !hasSuffix("config.json") || !hasSuffix("model.safetensors") || !hasSuffix("tokenizer.json") {
				t.Fatalf("download cache %s lacks the repo's files: %v", cache, fetched)
			}
			for _, name := range c.unused {
				if hasSuffix(name) {
					t.Errorf("downloaded %s, which nothing reads", name)
				}
			}
			if c.kind == "reranker" {
				args := []string{"--query", "What did Alice say about the trip?", "--doc", "Alice said the trip was long.", "--doc", "Bob", "--doc", "我们去露营了。"}
				a, b := scoreCLI(t, append([]string{"--model", hub}, args...)...), scoreCLI(t, append([]string{"--model", local}, args...)...)
				for i := range a.Logits {
					if a.Logits[i] != b.Logits[i] || math.IsNaN(a.Logits[i]) {
						t.Errorf("doc %d: from the hub %v, from the folder %v", i, a.Logits[i], b.Logits[i])
					}
				}
				return
			}
			texts := []string{"Alice said the trip was long.", "我们去露营了。"}
			var vecs [2][][]float32
			for i, dir := range []string{hub, local} {
				o := model.DefaultEmbedderOptions()
				o.RuntimeLib = defaultORTLib()
				e, err := model.OpenEmbedder(dir, o)
				if err != nil {
					t.Fatalf("open %s: %v", dir, err)
				}
				if vecs[i], err = e.Embed(context.Background(), texts, false); err != nil {
					t.Fatal(err)
				}
				if e.MaxLength() != 40 {
					t.Errorf("%s: input limit %d (%s), want sentence_bert_config.json's 40", dir, e.MaxLength(), e.Info().MaxLengthSource)
				}
				_ = e.Close()
			}
			for i := range texts {
				if !slices.Equal(vecs[0][i], vecs[1][i]) || len(vecs[0][i]) == 0 {
					t.Errorf("text %d: from the hub %v, from the folder %v", i, vecs[0][i][:min(4, len(vecs[0][i]))], vecs[1][i][:min(4, len(vecs[1][i]))])
				}
			}
		})
	}
}
