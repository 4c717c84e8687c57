package folder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/rerank"
)

// Templates in model folders: rerank.TemplateFile is rerankd's own record,
// written by convert into every folder it makes; LoadTemplate says where
// each other source is read.

// knownRepos maps hub repos whose folders say nothing about their prompt
// to their template, for convert --from: the model card is the only
// source, and it is code, not a file.
var knownRepos = map[string]string{
	"mixedbread-ai/mxbai-rerank-base-v2":   rerank.TemplateMxbaiV2,
	"mixedbread-ai/mxbai-rerank-large-v2":  rerank.TemplateMxbaiV2,
	"michaelfeil/mxbai-rerank-base-v2-seq": rerank.TemplateMxbaiV2,
}

// RepoTemplate returns the template of a known hub repo id, if any.
func RepoTemplate(repo string) (rerank.Template, bool) {
	name, ok := knownRepos[repo]
	if !ok {
		return rerank.Template{}, false
	}
	t := rerank.KnownTemplates[name]()
	t.Source = "known repo " + repo
	return t, true
}

// WriteTemplate records t in dir (rerank.TemplateFile), as convert does.
func WriteTemplate(dir string, t rerank.Template) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, rerank.TemplateFile), append(data, '\n'), 0o644)
}

// sentence-transformers CrossEncoder files (from memory of
// sentence-transformers v5: a CrossEncoder built from modules saves
// modules.json, each module's config in its folder, and
// config_sentence_transformers.json with model_type "CrossEncoder",
// prompts and default_prompt_name). A causal-LM CrossEncoder's score
// module is LogitScore (earlier CausalScoreHead), configured by
// true_token_id and false_token_id: score = logit(true) - logit(false).

type stModule struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

type stConfig struct {
	ModelType         string            `json:"model_type"`
	Prompts           map[string]string `json:"prompts"`
	DefaultPromptName *string           `json:"default_prompt_name"`
}

// stTemplate reads a sentence-transformers causal-LM CrossEncoder's answer
// ids and default prompt into base (the family's layout: the files say
// nothing about prefix or suffix). ok is false when dir is not such a
// CrossEncoder.
func stTemplate(dir string, base rerank.Template) (rerank.Template, bool, error) {
	var modules []stModule
	data, err := os.ReadFile(filepath.Join(dir, STModulesFile))
	if err != nil {
		return rerank.Template{}, false, nil //nolint:nilerr // no modules.json: not a sentence-transformers folder
	}
	if err := json.Unmarshal(data, &modules); err != nil {
		return rerank.Template{}, false, fmt.Errorf("%s: %w", STModulesFile, err)
	}
	var score *stModule
	for i, m := range modules {
		if isScoreModule(m.Type) {
			score = &modules[i]
		}
	}
	if score == nil {
		return rerank.Template{}, false, nil
	}
	cfgPath := filepath.Join(dir, filepath.FromSlash(score.Path), "config.json")
	var ids struct {
		True  *int `json:"true_token_id"`
		False *int `json:"false_token_id"`
	}
	if data, err = os.ReadFile(cfgPath); err != nil {
		return rerank.Template{}, false, fmt.Errorf("%s module %s: %w", score.Type, score.Path, err)
	}
	if err := json.Unmarshal(data, &ids); err != nil {
		return rerank.Template{}, false, fmt.Errorf("%s: %w", cfgPath, err)
	}
	switch {
	case ids.True == nil:
		return rerank.Template{}, false, fmt.Errorf("%s: no true_token_id", cfgPath)
	case ids.False == nil:
		return rerank.Template{}, false, fmt.Errorf("%s: a %s without false_token_id (the true logit alone) is not supported: rerankd scores logit(true) - logit(false)", cfgPath, score.Type)
	}
	t := base
	t.YesToken, t.NoToken, t.YesID, t.NoID = "", "", ids.True, ids.False
	t.Source = filepath.Join(dir, STModulesFile)
	if data, err := os.ReadFile(filepath.Join(dir, STConfigFile)); err == nil {
		var c stConfig
		if err := json.Unmarshal(data, &c); err != nil {
			return rerank.Template{}, false, fmt.Errorf("%s: %w", STConfigFile, err)
		}
		prompt, err := c.defaultPrompt()
		if err != nil {
			return rerank.Template{}, false, fmt.Errorf("%s: %w", STConfigFile, err)
		}
		if prompt != "" {
			t.DefaultInstruction = prompt
			t.Source += " + " + STConfigFile
		}
	}
	if t.Instruction == "" && t.DefaultInstruction != "" {
		return rerank.Template{}, false, fmt.Errorf("%s: a default prompt, but template %s has no instruction field to put it in", STConfigFile, t.Name)
	}
	return t, true, nil
}

// defaultPrompt is the prompt sentence-transformers applies when a call
// names none: default_prompt_name's, else none (several prompts and no
// default: the caller chooses, so nothing is assumed).
func (c stConfig) defaultPrompt() (string, error) {
	if c.DefaultPromptName == nil || *c.DefaultPromptName == "" {
		return "", nil
	}
	p, ok := c.Prompts[*c.DefaultPromptName]
	if !ok {
		return "", fmt.Errorf("default_prompt_name %q is not among the prompts", *c.DefaultPromptName)
	}
	return p, nil
}

// LoadTemplate returns the template of a model folder (a checkpoint or a
// converted folder), first found of:
//
//  1. rerankd_template.json (convert writes it into every folder);
//  2. sentence-transformers causal-LM CrossEncoder files: modules.json
//     with a LogitScore module (answer ids) and config_sentence_transformers.json
//     (its default prompt becomes the default instruction), laid out as
//     the family's template;
//  3. the family's default: the Qwen3-Reranker template for a Qwen3
//     decoder (Qwen3-Reranker, MemReranker and their classifier forms).
//
// A Qwen2 folder with none of these is refused: there is no Qwen2
// reranker convention to assume (convert --template names one).
func LoadTemplate(dir string) (rerank.Template, error) {
	path := filepath.Join(dir, rerank.TemplateFile)
	if _, err := os.Stat(path); err == nil {
		return rerank.ReadTemplateFile(path)
	}
	family := arch.FamilyQwen3
	if c, err := arch.ReadConfigInfo(filepath.Join(dir, hf.ConfigFile)); err == nil {
		family = c.Family()
	}
	base := rerank.Qwen3RerankerTemplate()
	if family == arch.FamilyQwen2 {
		base = rerank.MxbaiRerankV2Template()
	}
	t, ok, err := stTemplate(dir, base)
	if err != nil || ok {
		return t, err
	}
	if family == arch.FamilyQwen2 {
		return rerank.Template{}, fmt.Errorf("%s: a %s model without %s or a sentence-transformers LogitScore module: its prompt is unknown; "+
			"name it with `rerankd convert --template` (%s, or a file)", dir, family, rerank.TemplateFile, rerank.TemplateMxbaiV2)
	}
	base.Source = "default (" + rerank.TemplateQwen3Reranker + ")"
	return base, nil
}

// crossEncoder reports whether src's sentence-transformers files describe a
// CrossEncoder (a reranker) rather than an embedding model: a LogitScore
// (or CausalScoreHead) module in modules.json, or
// config_sentence_transformers.json's model_type "CrossEncoder".
func crossEncoder(src string) (bool, string) {
	if data, err := os.ReadFile(filepath.Join(src, STModulesFile)); err == nil {
		var modules []stModule
		if json.Unmarshal(data, &modules) == nil {
			for _, m := range modules {
				if isScoreModule(m.Type) {
					return true, fmt.Sprintf("%s lists a %s module (a CrossEncoder)", STModulesFile, m.Type)
				}
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(src, STConfigFile)); err == nil {
		var c stConfig
		if json.Unmarshal(data, &c) == nil && c.ModelType == "CrossEncoder" {
			return true, STConfigFile + ` model_type "CrossEncoder"`
		}
	}
	return false, ""
}

// isScoreModule reports whether a sentence-transformers module type is a
// causal-LM CrossEncoder's score head.
func isScoreModule(typ string) bool {
	n := typ[strings.LastIndex(typ, ".")+1:]
	return n == "LogitScore" || n == "CausalScoreHead"
}
