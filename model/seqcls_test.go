package model

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/rerank"
)

// tinySeqCls is arch.Tiny as a Qwen3ForSequenceClassification checkpoint
// with n labels, Qwen3's pad token and the given activation key.
func tinySeqCls(n int, tied bool, activation string) arch.Config {
	c := arch.Tiny()
	c.Architectures = []string{arch.ArchSeqCls}
	c.TieWordEmbeddings = tied
	pad := 151643 // <|endoftext|>
	c.PadTokenID = &pad
	c.ID2Label = map[string]string{}
	for i := range n {
		c.ID2Label[fmt.Sprint(i)] = fmt.Sprintf("LABEL_%d", i)
	}
	switch {
	case strings.HasPrefix(activation, "st:"):
		c.SentenceTransformers = &arch.STCrossEncoder{ActivationFn: strings.TrimPrefix(activation, "st:"), Version: "4.1.0"}
	case activation != "":
		c.SbertCEActivation = activation
	}
	return c
}

// TestSeqClsConvertScore: Qwen3ForSequenceClassification checkpoints (1
// label with sigmoid or identity, 2 labels with softmax; fp32, bf16, fp16;
// tie_word_embeddings either way, which a classifier does not use) convert
// with --kind auto and score on ONNX Runtime within 1e-4 of the reference
// pass that pools score.weight at the last non-pad token, as transformers
// does, and applies the folder's activation.
func TestSeqClsConvertScore(t *testing.T) {
	cases := []struct {
		name       string
		labels     int
		tied       bool
		activation string
		dtype      string
		want       arch.Activation
	}{
		{"1 label default sigmoid fp32 tied", 1, true, "", "F32", arch.ActSigmoid},
		{"1 label st Sigmoid bf16 untied", 1, false, "st:torch.nn.modules.activation.Sigmoid", "BF16", arch.ActSigmoid},
		{"1 label sbert Identity fp16 tied", 1, true, "torch.nn.modules.linear.Identity", "F16", arch.ActIdentity},
		{"2 labels softmax bf16 tied", 2, true, "", "BF16", arch.ActSoftmax2},
		{"2 labels st Identity fp16 untied", 2, false, "st:torch.nn.modules.linear.Identity", "F16", arch.ActSoftmax2},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinySeqCls(c.labels, c.tied, c.activation)
			if act, err := cfg.ScoreActivation(); err != nil || act != c.want {
				t.Fatalf("activation %q, %v; want %q", act, err, c.want)
			}
			w, err := arch.Random(cfg, uint64(30+i))
			if err != nil {
				t.Fatal(err)
			}
			src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			if err := hf.WriteCheckpoint(src, w, c.dtype, 1); err != nil {
				t.Fatal(err)
			}
			if kind, why, err := folder.DetectKind(src); err != nil || kind != folder.KindReranker {
				t.Fatalf("DetectKind = %v (%s), %v", kind, why, err)
			}
			// Weights external, as a real Qwen3 classifier's are (over
			// onnx.DefaultStorage's inline limit).
			if err := folder.Convert(src, out, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), ForceExternal: true}); err != nil {
				t.Fatal(err)
			}
			loaded, err := hf.LoadCheckpoint(src) // the stored (rounded) weights
			if err != nil {
				t.Fatal(err)
			}
			refLogits := map[string][]float32{} // the reference pass per prompt, shared by the engines
			for _, engine := range []EngineKind{EngineONNX, EngineReference} {
				s := openModel(t, out, engine, rerank.DefaultScorerConfig())
				r := rerank.Request{Query: "Where did Caroline go?", Docs: mixedDocs(4)}
				prompts, err := s.Prompts(r)
				if err != nil {
					t.Fatal(err)
				}
				got := scoreAll(t, s, r)
				for j, p := range prompts {
					key := fmt.Sprint(p.IDs)
					logits, ok := refLogits[key]
					if !ok {
						if logits, err = ref.SeqClsLogits(loaded, p.IDs); err != nil {
							t.Fatal(err)
						}
						refLogits[key] = logits
					}
					want, err := ref.SeqClsScore(c.want, logits)
					if err != nil {
						t.Fatal(err)
					}
					wantLogit := float64(logits[0])
					if c.labels == 2 {
						wantLogit = float64(logits[1] - logits[0])
					}
					// The model's own score: the logit for Identity, else
					// rerankd's probability.
					served := got[j].Score
					if c.want == arch.ActIdentity {
						served = got[j].Logit
					}
					if math.Abs(served-want) > 1e-4 || math.Abs(got[j].Logit-wantLogit) > 1e-4 {
						t.Errorf("%s doc %d: score %.6f logit %.6f, reference %.6f / %.6f", engine, j, served, got[j].Logit, want, wantLogit)
					}
				}
			}
		})
	}
}

// TestSeqClsRefused: activations and label counts without one relevance
// number, and architectures rerankd does not compute, are refused by name
// before anything is written.
func TestSeqClsRefused(t *testing.T) {
	for _, c := range []struct {
		cfg  arch.Config
		want []string
	}{
		{tinySeqCls(2, true, "st:torch.nn.modules.activation.Sigmoid"), []string{"sentence_transformers.activation_fn", "Sigmoid", "2 labels"}},
		{tinySeqCls(3, true, ""), []string{"3 labels"}},
		{tinySeqCls(1, true, "torch.nn.modules.activation.Tanh"), []string{"sbert_ce_default_activation_function", "Tanh"}},
	} {
		src := t.TempDir()
		if err := arch.WriteConfig(filepath.Join(src, hf.ConfigFile), c.cfg); err != nil {
			t.Fatal(err)
		}
		err := folder.Convert(src, filepath.Join(t.TempDir(), "out"), folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Convert = %v, want it to name %q", err, w)
			}
		}
	}
}

// TestUnsupportedArchitecture: cross-encoders of families rerankd does
// not compute (BERT and XLM-R it does: encoder_convert_test.go) are
// refused by Convert and DetectKind (--kind auto) with their architecture
// named, not with a list of missing Qwen3 sizes.
func TestUnsupportedArchitecture(t *testing.T) {
	for _, c := range []struct{ arch, modelType string }{
		{"ModernBertForSequenceClassification", "modernbert"},
		{"DebertaV2ForSequenceClassification", "deberta-v2"},
		{"GemmaForCausalLM", "gemma"},
	} {
		src := t.TempDir()
		cfg := fmt.Sprintf(`{"architectures":[%q],"model_type":%q,"hidden_size":384,"num_labels":1}`, c.arch, c.modelType)
		if err := writeFile(filepath.Join(src, hf.ConfigFile), cfg); err != nil {
			t.Fatal(err)
		}
		_, _, derr := folder.DetectKind(src)
		cerr := folder.Convert(src, filepath.Join(t.TempDir(), "out"), folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
		for _, err := range []error{derr, cerr} {
			if err == nil || !strings.Contains(err.Error(), c.arch) || !strings.Contains(err.Error(), "not supported yet") ||
				strings.Contains(err.Error(), "must be > 0") {
				t.Errorf("%s: %v, want the architecture named as not supported yet", c.arch, err)
			}
		}
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
