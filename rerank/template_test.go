package rerank

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/tokentest"
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
		{"separator without pieces", func(t *Template) { t.Separator = "\n" }, []string{"separator without pieces"}},
		{"placeholder in separator", func(t *Template) { t.Pieces, t.Separator = true, "{query}" }, []string{"separator holds {query}"}},
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
	tk := tokentest.Qwen(t)
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

// TestTemplateFileJoinedMxbai: a rerankd_template.json that an earlier
// convert wrote for mxbai-rerank-v2 (the prompt joined into one string) is
// read as today's template in pieces, its answer ids kept; a custom file
// that differs in anything stays as written.
func TestTemplateFileJoinedMxbai(t *testing.T) {
	write := func(tmpl Template) string {
		data, err := json.Marshal(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), TemplateFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old := mxbaiJoined().WithIDs(16, 15)
	got, err := ReadTemplateFile(write(old))
	if err != nil {
		t.Fatal(err)
	}
	if !got.sameText(MxbaiRerankV2Template()) || *got.YesID != 16 || *got.NoID != 15 || !strings.Contains(got.Source, "joined form") {
		t.Errorf("joined mxbai file read as %+v", got)
	}
	custom := old
	custom.Query = "query: {query}\n\n"
	if got, err := ReadTemplateFile(write(custom)); err != nil || got.Pieces || got.Query != custom.Query {
		t.Errorf("custom file read as %+v, %v", got, err)
	}
}
