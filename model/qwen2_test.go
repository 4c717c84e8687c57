package model

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/rerank"
)

// qwen2Tiny is arch.Qwen2Tiny as a causal LM (tied or not) or, with
// labels > 0, a Qwen2ForSequenceClassification checkpoint.
func qwen2Tiny(tied bool, labels int) arch.Config {
	c := arch.Qwen2Tiny()
	c.TieWordEmbeddings = tied
	if labels > 0 {
		c.Architectures = []string{arch.ArchQwen2SeqCls}
		pad := 151643
		c.PadTokenID = &pad
		c.ID2Label = map[string]string{}
		for i := range labels {
			c.ID2Label[string(rune('0'+i))] = "LABEL_" + string(rune('0'+i))
		}
	}
	return c
}

// openEngine opens dir on one engine: ORT's plain graph, ORT's
// shared-prefix graph, or the reference engine, for quant q.
func openEngine(t *testing.T, dir, engine string, q onnx.Quant) (*rerank.Scorer, Info) {
	t.Helper()
	o := DefaultOptions()
	o.RuntimeLib, o.Quant = testenv.ORTLib(), q
	o.Session.IntraOpThreads = 2
	switch engine {
	case "plain":
		o.NoSharedPrefix = true
	case "reference":
		o.Engine = EngineReference
	}
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatalf("open %s (%s %v): %v", dir, engine, q, err)
	}
	if want := engine == "shared"; info.SharedPrefix != want {
		t.Fatalf("%s: shared prefix %v, want %v", engine, info.SharedPrefix, want)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, info
}

// TestQwen2ConvertScore: tiny Qwen2 checkpoints (q/k/v biases, no q/k
// norms; causal LM and classifier; fp32, bf16, fp16; tied and untied)
// convert with --kind auto and the mxbai-rerank-v2 template (answers "1"
// and "0"), and ONNX Runtime's plain and shared-prefix
// graphs and the reference engine score within 1e-4 of the reference pass
// over the stored weights. The int8 variant, biases kept float32, stays
// within its bound of float32, its shared-prefix graph within quantSameTol
// of its plain one.
func TestQwen2ConvertScore(t *testing.T) {
	cases := []struct {
		name   string
		tied   bool
		labels int
		dtype  string
		int8   bool
	}{
		{"causal fp32 tied", true, 0, "F32", false},
		{"causal bf16 untied int8", false, 0, "BF16", true},
		{"causal fp16 tied", true, 0, "F16", false},
		{"causal fp16 untied", false, 0, "F16", false},
		{"seqcls 1 label bf16 tied", true, 1, "BF16", false},
		{"seqcls 2 labels fp32 untied int8", false, 2, "F32", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := arch.Random(qwen2Tiny(c.tied, c.labels), uint64(50+i))
			if err != nil {
				t.Fatal(err)
			}
			src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			if err := hf.WriteCheckpoint(src, w, c.dtype, 1+i%2); err != nil {
				t.Fatal(err)
			}
			if kind, why, err := folder.DetectKind(src); err != nil || kind != folder.KindReranker {
				t.Fatalf("DetectKind = %v (%s), %v", kind, why, err)
			}
			tmpl := rerank.MxbaiRerankV2Template()
			// Weights external, as every real Qwen2 reranker's are (over
			// onnx.DefaultStorage's inline limit): the graphs share one
			// data file instead of each carrying a copy. The int8 cases
			// write the one variant they read.
			o := folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), Template: &tmpl, ForceExternal: true}
			if c.int8 {
				o.Quants = []onnx.Quant{onnx.QuantInt8}
			}
			if err := folder.Convert(src, out, o); err != nil {
				t.Fatal(err)
			}
			loaded, err := hf.LoadCheckpoint(src)
			if err != nil {
				t.Fatal(err)
			}
			if !loaded.Config.QKVBias() || loaded.Tensors[arch.LayerTensor(0, arch.QBias)] == nil {
				t.Fatal("loaded checkpoint has no q bias")
			}
			r := rerank.Request{Query: "Where did Caroline go?", Docs: mixedDocs(4)}
			wantYes, _ := tokentest.Qwen(t).TokenID("1")
			wantNo, _ := tokentest.Qwen(t).TokenID("0")
			var float []rerank.Score
			wants := map[string]float64{} // the reference pass per prompt, shared by the engines
			for _, engine := range []string{"plain", "shared", "reference"} {
				s, info := openEngine(t, out, engine, onnx.QuantNone)
				if info.Template.Name != rerank.TemplateMxbaiV2 || info.YesID != wantYes || info.NoID != wantNo {
					t.Fatalf("%s: template %q answers %d/%d, want %s with \"1\"/\"0\" = %d/%d",
						engine, info.Template.Name, info.YesID, info.NoID, rerank.TemplateMxbaiV2, wantYes, wantNo)
				}
				prompts, err := s.Prompts(r)
				if err != nil {
					t.Fatal(err)
				}
				got := scoreAll(t, s, r)
				if engine == "plain" {
					float = got
				}
				for j, p := range prompts {
					key := fmt.Sprint(info.YesID, info.NoID, p.IDs)
					want, ok := wants[key]
					if !ok {
						want = qwen2Reference(t, loaded, info, p.IDs)
						wants[key] = want
					}
					if math.Abs(got[j].Logit-want) > 1e-4 {
						t.Errorf("%s doc %d: logit %.6f, reference pass %.6f", engine, j, got[j].Logit, want)
					}
				}
			}
			if !c.int8 {
				return
			}
			s, _ := openEngine(t, out, "plain", onnx.QuantInt8)
			sp, _ := openEngine(t, out, "shared", onnx.QuantInt8)
			q, qs := scoreAll(t, s, r), scoreAll(t, sp, r)
			for j := range q {
				if d := math.Abs(q[j].Score - float[j].Score); d > quantScoreTol[onnx.QuantInt8] {
					t.Errorf("int8 doc %d: score %.6f, float32 %.6f", j, q[j].Score, float[j].Score)
				}
				if d := math.Abs(q[j].Logit - qs[j].Logit); d > quantSameTol(onnx.QuantInt8) {
					t.Errorf("int8 doc %d: shared-prefix logit %.7f, plain %.7f", j, qs[j].Logit, q[j].Logit)
				}
			}
		})
	}
}

// qwen2Reference is the reference pass's logit for ids: the yes-minus-no
// head difference of a causal LM (the folder's answer ids), or a
// classifier's score.weight pooled as transformers does (one label's
// logit, or label 1 minus label 0).
func qwen2Reference(t *testing.T, w *arch.Weights, info Info, ids []int) float64 {
	t.Helper()
	if w.Config.SeqCls() {
		logits, err := ref.SeqClsLogits(w, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(logits) == 2 {
			return float64(logits[1] - logits[0])
		}
		return float64(logits[0])
	}
	head, err := w.HeadDiff(info.YesID, info.NoID)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ref.Logit(w, head, ids)
	if err != nil {
		t.Fatal(err)
	}
	return float64(l)
}
