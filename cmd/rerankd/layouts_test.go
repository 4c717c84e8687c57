package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/rerank"
)

// TestConvertLayoutsFromHub: `rerankd convert --from REPO` downloads each
// supported reranker layout from a local hub and, with --kind auto,
// converts it as a reranker with the right template (the repo's own
// files, the known-repo table, or the family default). A Qwen2 repo that
// says nothing about its prompt is refused naming --template, and
// converts with it. The first layout's folder scores through `rerankd
// score` on ONNX Runtime as on the reference engine; that every head the
// layouts convert to (Qwen3 and Qwen2, causal LM and classifier) scores
// as the reference pass is model's TestSeqClsConvertScore and
// TestQwen2ConvertScore, without the race detector this package runs
// under.
func TestConvertLayoutsFromHub(t *testing.T) {
	qwen2Cls := arch.Qwen2Tiny()
	qwen2Cls.Architectures = []string{arch.ArchQwen2SeqCls}
	qwen2Cls.ID2Label = map[string]string{"0": "LABEL_0"}
	qwen3Cls := arch.Tiny()
	qwen3Cls.Architectures = []string{arch.ArchSeqCls}
	qwen3Cls.ID2Label = map[string]string{"0": "LABEL_0"}
	logitScore := map[string]string{
		"modules.json": `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.cross_encoder.modules.Transformer"},` +
			`{"idx":1,"name":"1","path":"1_LogitScore","type":"sentence_transformers.cross_encoder.modules.LogitScore"}]`,
		"1_LogitScore/config.json":          `{"true_token_id": 16, "false_token_id": 15}`,
		"config_sentence_transformers.json": `{"model_type":"CrossEncoder","prompts":{"memory":"Find the memory"},"default_prompt_name":"memory"}`,
	}
	for _, c := range []struct {
		name, repo string
		cfg        arch.Config
		files      map[string]string
		args       []string
		template   string // want; "" = refused
		yesID      int
		refusal    string
	}{
		{"Qwen3-Reranker", "Qwen/Qwen3-Reranker-0.6B", arch.Tiny(), nil, nil, rerank.TemplateQwen3Reranker, 9693, ""},
		{"Qwen3 seq-cls", "tomaarsen/Qwen3-Reranker-0.6B-seq-cls", qwen3Cls, nil, nil, rerank.TemplateQwen3Reranker, 9693, ""},
		{"mxbai causal LM", "mixedbread-ai/mxbai-rerank-base-v2", arch.Qwen2Tiny(), nil, nil, rerank.TemplateMxbaiV2, 16, ""},
		{"mxbai seq-cls", "michaelfeil/mxbai-rerank-base-v2-seq", qwen2Cls, nil, nil, rerank.TemplateMxbaiV2, 16, ""},
		{"Qwen2 LogitScore CrossEncoder", "test/qwen2-cross-encoder", arch.Qwen2Tiny(), logitScore, nil, rerank.TemplateMxbaiV2, 16, ""},
		{"Qwen2 unknown prompt", "test/qwen2-reranker", arch.Qwen2Tiny(), nil, nil, "", 0, "--template"},
		{"Qwen2 with --template", "test/qwen2-reranker", arch.Qwen2Tiny(), nil, []string{"--template", rerank.TemplateMxbaiV2}, rerank.TemplateMxbaiV2, 16, ""},
	} {
		if testing.Short() && c.name != "Qwen3-Reranker" && c.refusal == "" {
			continue // -short: our own layout and the refusal
		}
		t.Run(c.name, func(t *testing.T) {
			ckpt := writeCheckpoint(t, c.cfg, 21)
			for name, content := range c.files {
				p := filepath.Join(ckpt, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			serveHub(t, c.repo, ckpt)
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"convert", "--from", c.repo, "--out", out, "--quant", "none"}, c.args...)
			code, _, errs := runCLI(t, args...)
			if c.refusal != "" {
				if code == 0 || !strings.Contains(errs, c.refusal) {
					t.Fatalf("convert: exit %d, %s; want a refusal naming %q", code, errs, c.refusal)
				}
				return
			}
			if code != 0 {
				t.Fatalf("convert: exit %d: %s", code, errs)
			}
			tmpl, err := folder.LoadTemplate(out)
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.Name != c.template || tmpl.YesID == nil || *tmpl.YesID != c.yesID || !strings.HasSuffix(tmpl.Source, rerank.TemplateFile) {
				t.Errorf("template %q (%s), yes id %v; want %q with %d", tmpl.Name, tmpl.Source, tmpl.YesID, c.template, c.yesID)
			}
			if c.files != nil && tmpl.DefaultInstruction != "Find the memory" {
				t.Errorf("default instruction %q, want the CrossEncoder's default prompt", tmpl.DefaultInstruction)
			}
			if c.name != "Qwen3-Reranker" {
				return
			}
			sargs := []string{"--model", out, "--query", "Did Caroline attend a support group?",
				"--doc", "Caroline went to the support group yesterday.", "--doc", "x"}
			onnxOut, refOut := scoreCLI(t, sargs...), scoreCLI(t, append(sargs, "--engine", "reference")...)
			for i := range onnxOut.Logits {
				if d := math.Abs(onnxOut.Logits[i] - refOut.Logits[i]); d > 1e-4 {
					t.Errorf("doc %d: onnx logit %.6f, reference %.6f", i, onnxOut.Logits[i], refOut.Logits[i])
				}
			}
		})
	}
}
