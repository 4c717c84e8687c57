package folder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/rerank"
)

// TestLoadTemplate: where a folder's template comes from, in order, and
// the folders refused with the file or key named.
func TestLoadTemplate(t *testing.T) {
	qwen3 := arch.Tiny()
	qwen2 := arch.Qwen2Tiny()
	logitScore := func(trueID, falseID string) map[string]string {
		cfg := `{"true_token_id": ` + trueID
		if falseID != "" {
			cfg += `, "false_token_id": ` + falseID
		}
		return map[string]string{
			STModulesFile: `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.cross_encoder.modules.Transformer"},` +
				`{"idx":1,"name":"1","path":"1_LogitScore","type":"sentence_transformers.cross_encoder.modules.LogitScore"}]`,
			"1_LogitScore/config.json": cfg + "}",
		}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name     string
		cfg      arch.Config
		files    map[string]string
		wantName string
		wantYes  int
		wantInst string
		want     string // error
	}{
		{"qwen3 default", qwen3, nil, rerank.TemplateQwen3Reranker, 9693, rerank.DefaultInstruction, ""},
		{"qwen2 without template", qwen2, nil, "", 0, "", "its prompt is unknown"},
		{"rerankd file", qwen2, map[string]string{rerank.TemplateFile: `{"name":"mxbai-rerank-v2","prefix":"","instruction":"","query":"query: {query}\n","document":"document: {document}","suffix":"","yes_token":"1","no_token":"0"}`},
			rerank.TemplateMxbaiV2, 16, "", ""},
		{"rerankd file unknown key", qwen3, map[string]string{rerank.TemplateFile: `{"name":"x","query":"{query}","document":"{document}","yes_token":"a","no_token":"b","extra":1}`},
			"", 0, "", `unknown field "extra"`},
		{"rerankd file bad placeholder", qwen3, map[string]string{rerank.TemplateFile: `{"name":"x","query":"q","document":"{document}","yes_token":"a","no_token":"b"}`},
			"", 0, "", "template query"},
		{"LogitScore qwen3", qwen3, logitScore("16", "15"), rerank.TemplateQwen3Reranker, 16, rerank.DefaultInstruction, ""},
		{"LogitScore qwen2 with default prompt", qwen2, with(logitScore("16", "15"), STConfigFile, `{"model_type":"CrossEncoder","prompts":{"web":"Find the passage"},"default_prompt_name":"web"}`),
			rerank.TemplateMxbaiV2, 16, "Find the passage", ""},
		{"LogitScore without false id", qwen2, logitScore("16", ""), "", 0, "", "without false_token_id"},
		{"default prompt missing", qwen2, with(logitScore("16", "15"), STConfigFile, `{"prompts":{},"default_prompt_name":"web"}`), "", 0, "", `default_prompt_name "web"`},
		{"embedding modules are not a CrossEncoder", qwen3, map[string]string{STModulesFile: `[{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`},
			rerank.TemplateQwen3Reranker, 9693, rerank.DefaultInstruction, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := arch.WriteConfig(filepath.Join(dir, hf.ConfigFile), c.cfg); err != nil {
				t.Fatal(err)
			}
			for name, content := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := writeFile(p, content); err != nil {
					t.Fatal(err)
				}
			}
			tmpl, err := LoadTemplate(dir)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("LoadTemplate = %+v, %v; want an error naming %q", tmpl, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			yes, _, err := tmpl.ScoreIDs(tokentest.Qwen(t))
			if err != nil || tmpl.Name != c.wantName || yes != c.wantYes || tmpl.DefaultInstruction != c.wantInst || tmpl.Source == "" {
				t.Errorf("template %q (from %q) yes %d, instruction %q, %v; want %q, %d, %q", tmpl.Name, tmpl.Source, yes, tmpl.DefaultInstruction, err, c.wantName, c.wantYes, c.wantInst)
			}
		})
	}
}

// TestDetectKindCrossEncoder: sentence-transformers files of a causal-LM
// CrossEncoder mean a reranker, not an embedding model (which other
// sentence-transformers files mean); Qwen2 rerankers are rerankers.
func TestDetectKindCrossEncoder(t *testing.T) {
	seqcls := arch.Qwen2Tiny()
	seqcls.Architectures = []string{arch.ArchQwen2SeqCls}
	for _, c := range []struct {
		name  string
		cfg   arch.Config
		files map[string]string
		want  ModelKind
	}{
		{"LogitScore module", arch.Tiny(), map[string]string{STModulesFile: `[{"path":"1_LogitScore","type":"sentence_transformers.cross_encoder.modules.LogitScore"}]`}, KindReranker},
		{"CausalScoreHead module", arch.Qwen2Tiny(), map[string]string{STModulesFile: `[{"path":"1_CausalScoreHead","type":"sentence_transformers.cross_encoder.models.CausalScoreHead"}]`}, KindReranker},
		{"CrossEncoder model_type", arch.Tiny(), map[string]string{STModulesFile: `[]`, STConfigFile: `{"model_type":"CrossEncoder"}`}, KindReranker},
		{"pooling modules", arch.Tiny(), map[string]string{STModulesFile: `[{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`}, KindEmbedding},
		{"Qwen2 causal LM", arch.Qwen2Tiny(), nil, KindReranker},
		{"Qwen2 classifier", seqcls, nil, KindReranker},
	} {
		dir := t.TempDir()
		if err := arch.WriteConfig(filepath.Join(dir, hf.ConfigFile), c.cfg); err != nil {
			t.Fatal(err)
		}
		for name, content := range c.files {
			if err := writeFile(filepath.Join(dir, name), content); err != nil {
				t.Fatal(err)
			}
		}
		if got, why, err := DetectKind(dir); err != nil || got != c.want {
			t.Errorf("%s: DetectKind = %v (%s), %v; want %v", c.name, got, why, err, c.want)
		}
	}
}
