package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
)

// TestTemplateText: each known template writes its model's published
// prompt (the strings of Qwen3RerankerTemplate's and
// MxbaiRerankV2Template's docs), with and without an instruction.
func TestTemplateText(t *testing.T) {
	mxPrefix := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
	mxSuffix := "\nYou are a search relevance expert who evaluates how well documents match search queries. For each query-document pair, " +
		"carefully analyze the semantic relationship between them, then provide your binary relevance judgment (0 for not relevant, 1 for relevant).\n" +
		"Relevance:<|im_end|>\n<|im_start|>assistant\n"
	for _, c := range []struct {
		name        string
		tmpl        Template
		instruction string
		want        string
	}{
		{"qwen3 default instruction", Qwen3RerankerTemplate(), "",
			PromptPrefix + "<Instruct>: " + DefaultInstruction + "\n<Query>: Q?\n<Document>: D." + PromptSuffix},
		{"qwen3 instruction", Qwen3RerankerTemplate(), "Find it",
			PromptPrefix + "<Instruct>: Find it\n<Query>: Q?\n<Document>: D." + PromptSuffix},
		{"mxbai no instruction", MxbaiRerankV2Template(), "", mxPrefix + "query: Q?\ndocument: D." + mxSuffix},
		{"mxbai instruction", MxbaiRerankV2Template(), "Find it", mxPrefix + "instruction: Find it\nquery: Q?\ndocument: D." + mxSuffix},
	} {
		if got := c.tmpl.fullPrompt(c.instruction, "Q?", "D."); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestTemplateValidate: placeholders once each, in their own field, and
// both answers named; every problem at once.
func TestTemplateValidate(t *testing.T) {
	one := 1
	for _, c := range []struct {
		name string
		edit func(*Template)
		want []string
	}{
		{"ok", func(*Template) {}, nil},
		{"ids only", func(t *Template) { t.YesToken, t.NoToken, t.YesID, t.NoID = "", "", &one, new(int) }, nil},
		{"no instruction field", func(t *Template) { t.Instruction, t.DefaultInstruction = "", "" }, nil},
		{"query twice", func(t *Template) { t.Query = "{query} {query}" }, []string{"query", "exactly once, found 2"}},
		{"no document", func(t *Template) { t.Document = "doc" }, []string{"document", "{document}"}},
		{"placeholder in prefix", func(t *Template) { t.Prefix += "{query}" }, []string{"prefix holds {query}"}},
		{"default without field", func(t *Template) { t.Instruction = "" }, []string{"default_instruction"}},
		{"no answers", func(t *Template) { t.YesToken, t.NoToken = "", "" }, []string{"yes_token nor yes_id", "no_token nor no_id"}},
		{"negative id", func(t *Template) { m := -1; t.YesID = &m }, []string{"answer id -1"}},
	} {
		tmpl := Qwen3RerankerTemplate()
		c.edit(&tmpl)
		err := tmpl.Validate()
		if len(c.want) == 0 && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to name %q", c.name, err, w)
			}
		}
	}
}

// TestTemplateScoreIDs: answers by token or by id, checked against each
// other and the tokenizer.
func TestTemplateScoreIDs(t *testing.T) {
	tk := qwenTokenizer(t)
	yes, _ := tk.TokenID("yes")
	no, _ := tk.TokenID("no")
	one, _ := tk.TokenID("1")
	for _, c := range []struct {
		name            string
		edit            func(*Template)
		wantYes, wantNo int
		want            string
	}{
		{"qwen3 yes/no", func(*Template) {}, yes, no, ""},
		{"mxbai 1/0", func(t *Template) { *t = MxbaiRerankV2Template() }, one, one - 1, ""},
		{"ids", func(t *Template) { t.YesToken, t.NoToken, t.YesID, t.NoID = "", "", &one, &yes }, one, yes, ""},
		{"id disagrees", func(t *Template) { t.YesID = &one }, 0, 0, `yes_id`},
		{"several tokens", func(t *Template) { t.NoToken = "not relevant at all" }, 0, 0, `no_token "not relevant at all" is`},
		{"same", func(t *Template) { t.NoToken = "yes" }, 0, 0, "same id"},
	} {
		tmpl := Qwen3RerankerTemplate()
		c.edit(&tmpl)
		y, n, err := tmpl.ScoreIDs(tk)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %d/%d, %v; want an error naming %q", c.name, y, n, err, c.want)
			}
			continue
		}
		if err != nil || y != c.wantYes || n != c.wantNo {
			t.Errorf("%s: %d/%d, %v; want %d/%d", c.name, y, n, err, c.wantYes, c.wantNo)
		}
	}
}

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
			stModulesFile: `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.cross_encoder.modules.Transformer"},` +
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
		{"qwen3 default", qwen3, nil, TemplateQwen3Reranker, 9693, DefaultInstruction, ""},
		{"qwen2 without template", qwen2, nil, "", 0, "", "its prompt is unknown"},
		{"rerankd file", qwen2, map[string]string{TemplateFile: `{"name":"mxbai-rerank-v2","prefix":"","instruction":"","query":"query: {query}\n","document":"document: {document}","suffix":"","yes_token":"1","no_token":"0"}`},
			TemplateMxbaiV2, 16, "", ""},
		{"rerankd file unknown key", qwen3, map[string]string{TemplateFile: `{"name":"x","query":"{query}","document":"{document}","yes_token":"a","no_token":"b","extra":1}`},
			"", 0, "", `unknown field "extra"`},
		{"rerankd file bad placeholder", qwen3, map[string]string{TemplateFile: `{"name":"x","query":"q","document":"{document}","yes_token":"a","no_token":"b"}`},
			"", 0, "", "template query"},
		{"LogitScore qwen3", qwen3, logitScore("16", "15"), TemplateQwen3Reranker, 16, DefaultInstruction, ""},
		{"LogitScore qwen2 with default prompt", qwen2, with(logitScore("16", "15"), stConfigFile, `{"model_type":"CrossEncoder","prompts":{"web":"Find the passage"},"default_prompt_name":"web"}`),
			TemplateMxbaiV2, 16, "Find the passage", ""},
		{"LogitScore without false id", qwen2, logitScore("16", ""), "", 0, "", "without false_token_id"},
		{"default prompt missing", qwen2, with(logitScore("16", "15"), stConfigFile, `{"prompts":{},"default_prompt_name":"web"}`), "", 0, "", `default_prompt_name "web"`},
		{"embedding modules are not a CrossEncoder", qwen3, map[string]string{stModulesFile: `[{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`},
			TemplateQwen3Reranker, 9693, DefaultInstruction, ""},
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
			yes, _, err := tmpl.ScoreIDs(qwenTokenizer(t))
			if err != nil || tmpl.Name != c.wantName || yes != c.wantYes || tmpl.DefaultInstruction != c.wantInst || tmpl.Source == "" {
				t.Errorf("template %q (from %q) yes %d, instruction %q, %v; want %q, %d, %q", tmpl.Name, tmpl.Source, yes, tmpl.DefaultInstruction, err, c.wantName, c.wantYes, c.wantInst)
			}
		})
	}
}

// TestConvertWritesTemplate: a converted folder records its template with
// the answer ids; opening it reads that file, not the default, and a
// Qwen2 source without one is refused naming --template.
func TestConvertWritesTemplate(t *testing.T) {
	w, err := arch.Random(arch.Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := hf.WriteCheckpoint(src, w, "F32", 1); err != nil {
		t.Fatal(err)
	}
	// A MemReranker-style folder whose own template asks for 1/0 answers
	// and another instruction.
	custom := Qwen3RerankerTemplate()
	custom.Name, custom.YesToken, custom.NoToken, custom.DefaultInstruction = "custom", "1", "0", "Find memories"
	if err := writeTemplate(src, custom); err != nil {
		t.Fatal(err)
	}
	if err := Convert(src, out, BuildOptions{Tokenizer: testenv.TokenizerDir(), NoSharedPrefix: true}); err != nil {
		t.Fatal(err)
	}
	got, err := readTemplateFile(filepath.Join(out, TemplateFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "custom" || got.YesID == nil || *got.YesID != 16 || got.NoID == nil || *got.NoID != 15 || got.DefaultInstruction != "Find memories" {
		t.Errorf("written template %+v", got)
	}
	s, info := openEngine(t, out, "plain", 0)
	if info.YesID != 16 || info.NoID != 15 || s.Template().Name != "custom" {
		t.Errorf("opened: answers %d/%d, template %q", info.YesID, info.NoID, s.Template().Name)
	}
	p, err := s.Prompts(Request{Query: "q", Docs: []string{"d"}})
	if err != nil {
		t.Fatal(err)
	}
	if text, err := qwenTokenizer(t).Decode(p[0].IDs, false); err != nil || !strings.Contains(text, "<Instruct>: Find memories") {
		t.Errorf("prompt %q does not use the folder's instruction (%v)", text, err)
	}

	w2, err := arch.Random(arch.Qwen2Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	src2 := t.TempDir()
	if err := hf.WriteCheckpoint(src2, w2, "F32", 1); err != nil {
		t.Fatal(err)
	}
	err = Convert(src2, filepath.Join(t.TempDir(), "out"), BuildOptions{Tokenizer: testenv.TokenizerDir()})
	if err == nil || !strings.Contains(err.Error(), "--template") {
		t.Errorf("Convert of a Qwen2 checkpoint without a template = %v, want it refused naming --template", err)
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
		{"LogitScore module", arch.Tiny(), map[string]string{stModulesFile: `[{"path":"1_LogitScore","type":"sentence_transformers.cross_encoder.modules.LogitScore"}]`}, KindReranker},
		{"CausalScoreHead module", arch.Qwen2Tiny(), map[string]string{stModulesFile: `[{"path":"1_CausalScoreHead","type":"sentence_transformers.cross_encoder.models.CausalScoreHead"}]`}, KindReranker},
		{"CrossEncoder model_type", arch.Tiny(), map[string]string{stModulesFile: `[]`, stConfigFile: `{"model_type":"CrossEncoder"}`}, KindReranker},
		{"pooling modules", arch.Tiny(), map[string]string{stModulesFile: `[{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`}, KindEmbedding},
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
