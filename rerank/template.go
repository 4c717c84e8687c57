package rerank

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rerankd/rerankd/tokenizer"
)

// Templates as data: a reranker's prompt and the two answer tokens whose
// logits score it come from the model folder where it says what they are,
// not from code. TemplateFile is rerankd's own record of them, written by
// convert into every folder it makes; LoadTemplate says where each other
// source is read.

// TemplateFile is the template of a converted model folder.
const TemplateFile = "rerankd_template.json"

// Placeholders a Template's fields hold.
const (
	phInstruction = "{instruction}"
	phQuery       = "{query}"
	phDocument    = "{document}"
)

// Template is how a reranker's prompt is built and scored. The prompt is
//
//	Prefix + Instruction(instruction) + Query(query) + Document(doc) + Suffix
//
// where each of Instruction, Query and Document holds its placeholder
// ({instruction}, {query}, {document}) once. Instruction is left out when
// the request's instruction and DefaultInstruction are both empty. Prefix
// and Suffix are tokenized alone, as the published usages do; the rest
// in the segments promptEncoder describes, whose ids equal those of the
// joined string. With Pieces the prompt is instead
//
//	Prefix + Instruction(instruction) Query(query) + Separator + Document(doc) + Separator + Suffix
//
// with each of the five parts (the instruction and query fields are one)
// tokenized alone and the ids concatenated, as mixedbread's mxbai-rerank
// package builds it; that differs from the joined string where a query or
// document ends in white space, and it truncates as that package does
// (promptEncoder.pieces). The score is logit(Yes) - logit(No) at the last
// position.
type Template struct {
	// Name identifies a known template ("qwen3-reranker",
	// "mxbai-rerank-v2") or says "custom".
	Name               string `json:"name"`
	Prefix             string `json:"prefix"`
	Instruction        string `json:"instruction"`
	Query              string `json:"query"`
	Document           string `json:"document"`
	Suffix             string `json:"suffix"`
	DefaultInstruction string `json:"default_instruction,omitempty"`
	// Pieces tokenizes the parts alone and truncates as mxbai-rerank does
	// (see above); Separator is the part written between the query and
	// the document and after the document, only with Pieces.
	Pieces    bool   `json:"pieces,omitempty"`
	Separator string `json:"separator,omitempty"`
	// YesToken and NoToken are the answer tokens ("yes"/"no", "1"/"0",
	// "true"/"false"); YesID and NoID their ids in the folder's tokenizer,
	// which convert records. Ids alone (a sentence-transformers LogitScore
	// gives only those) are enough.
	YesToken string `json:"yes_token,omitempty"`
	NoToken  string `json:"no_token,omitempty"`
	YesID    *int   `json:"yes_id,omitempty"`
	NoID     *int   `json:"no_id,omitempty"`
	// Source says where the template was read (not stored in the file).
	Source string `json:"-"`
}

// Template names.
const (
	TemplateQwen3Reranker = "qwen3-reranker"
	TemplateMxbaiV2       = "mxbai-rerank-v2"
)

// Qwen3RerankerTemplate is Qwen3-Reranker's template as its model card's
// Transformers usage writes it (from memory of the card; no network here):
//
//	prefix = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"
//	suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
//	"<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {doc}"
//
// tokenized as prefix ids + body ids + suffix ids, scored by the "yes"
// and "no" logits (convert_tokens_to_ids). The instruction defaults to
// "Given a web search query, retrieve relevant passages that answer the
// query". MemReranker folders use it too.
//
// The sources disagree on one point: the card's vLLM usage builds the
// same text through the chat template, which joins the system message
// and the user turn as "\n\n"-separated fields ("<Instruct>: ...\n\n
// <Query>: ...\n\n<Document>: ..."). rerankd follows the Transformers
// usage (single "\n"), the form the model card's own scoring code uses;
// a folder that wants the other writes it in rerankd_template.json.
func Qwen3RerankerTemplate() Template {
	return Template{
		Name: TemplateQwen3Reranker, Prefix: PromptPrefix,
		Instruction: "<Instruct>: {instruction}\n", Query: "<Query>: {query}\n", Document: "<Document>: {document}",
		Suffix: PromptSuffix, DefaultInstruction: DefaultInstruction, YesToken: "yes", NoToken: "no",
	}
}

// mxbaiTask is mxbai-rerank-v2's task prompt, placed after the document.
const mxbaiTask = "You are a search relevance expert who evaluates how well documents match search queries. " +
	"For each query-document pair, carefully analyze the semantic relationship between them, then provide your binary " +
	"relevance judgment (0 for not relevant, 1 for relevant).\nRelevance:"

// MxbaiRerankV2Template is mixedbread-ai/mxbai-rerank-{base,large}-v2's
// template, as the mxbai-rerank package's MxbaiRerankV2.prepare_inputs
// builds it (mxbai_rerank/mxbai_rerank_v2.py, read at commit 8e709dc):
//
//	ids("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n")
//	+ ids(["instruction: {instruction}\n"] + "query: {query}")  cut to 3/4 of max_length
//	+ ids("\n") + ids("document: {document}")               cut to the rest
//	+ ids("\n") + ids(task_prompt) + ids("<|im_end|>\n<|im_start|>assistant\n")
//
// each piece tokenized alone (add_special_tokens=False), no default
// instruction, and the score logit("1") - logit("0") at the last token
// (raw: the package returns the difference, rerankd's relevance_score is
// its sigmoid). The task prompt and the chat suffix are one Suffix here:
// the special token between them splits the text anyway.
// michaelfeil/mxbai-rerank-base-v2-seq (the same model as a classifier) is
// used with the same prompt.
func MxbaiRerankV2Template() Template {
	return Template{
		Name:        TemplateMxbaiV2,
		Prefix:      mxbaiPrefix,
		Instruction: "instruction: {instruction}\n", Query: "query: {query}", Document: "document: {document}",
		Suffix: mxbaiTask + mxbaiSuffix, YesToken: "1", NoToken: "0",
		Pieces: true, Separator: "\n",
	}
}

const (
	mxbaiPrefix = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
	mxbaiSuffix = "<|im_end|>\n<|im_start|>assistant\n"
)

// mxbaiJoined is MxbaiRerankV2Template as rerankd wrote it into
// rerankd_template.json before it built the prompt in pieces: one joined
// string, a defect. ReadTemplateFile reads a file holding exactly this as
// the current template.
func mxbaiJoined() Template {
	return Template{
		Name: TemplateMxbaiV2, Prefix: mxbaiPrefix,
		Instruction: "instruction: {instruction}\n", Query: "query: {query}\n", Document: "document: {document}\n",
		Suffix: mxbaiTask + mxbaiSuffix, YesToken: "1", NoToken: "0",
	}
}

// KnownTemplates are the templates selectable by name (convert --template).
var KnownTemplates = map[string]func() Template{
	TemplateQwen3Reranker: Qwen3RerankerTemplate,
	TemplateMxbaiV2:       MxbaiRerankV2Template,
}

// ParseTemplate returns a known template by name, or reads a template file.
func ParseTemplate(nameOrFile string) (Template, error) {
	if f, ok := KnownTemplates[nameOrFile]; ok {
		t := f()
		t.Source = "--template " + nameOrFile
		return t, nil
	}
	if _, err := os.Stat(nameOrFile); err != nil {
		return Template{}, fmt.Errorf("template %q is neither a known name (%s, %s) nor a readable file: %w",
			nameOrFile, TemplateQwen3Reranker, TemplateMxbaiV2, err)
	}
	return ReadTemplateFile(nameOrFile)
}

// Validate reports every problem at once: each placeholder exactly once in
// its field (and in no other), and answer tokens or ids for both sides.
func (t Template) Validate() error {
	var errs []error
	for _, f := range []struct{ name, value, ph string }{
		{"instruction", t.Instruction, phInstruction}, {"query", t.Query, phQuery}, {"document", t.Document, phDocument},
	} {
		if f.name == "instruction" && f.value == "" {
			if t.DefaultInstruction != "" {
				errs = append(errs, errors.New("template default_instruction without an instruction field"))
			}
			continue
		}
		if n := strings.Count(f.value, f.ph); n != 1 {
			errs = append(errs, fmt.Errorf("template %s %q: want %s exactly once, found %d", f.name, f.value, f.ph, n))
		}
	}
	for _, f := range []struct{ name, value string }{
		{"prefix", t.Prefix}, {"suffix", t.Suffix}, {"instruction", t.Instruction}, {"query", t.Query}, {"document", t.Document},
	} {
		for _, ph := range []string{phInstruction, phQuery, phDocument} {
			if strings.Contains(f.value, ph) && !strings.HasPrefix(ph, "{"+f.name) {
				errs = append(errs, fmt.Errorf("template %s holds %s, which belongs to another field", f.name, ph))
			}
		}
	}
	if t.YesToken == "" && t.YesID == nil {
		errs = append(errs, errors.New("template has neither yes_token nor yes_id"))
	}
	if t.NoToken == "" && t.NoID == nil {
		errs = append(errs, errors.New("template has neither no_token nor no_id"))
	}
	for _, id := range []*int{t.YesID, t.NoID} {
		if id != nil && *id < 0 {
			errs = append(errs, fmt.Errorf("template answer id %d: want >= 0", *id))
		}
	}
	if t.Separator != "" && !t.Pieces {
		errs = append(errs, errors.New("template separator without pieces: only a template tokenized in pieces writes it"))
	}
	for _, ph := range []string{phInstruction, phQuery, phDocument} {
		if strings.Contains(t.Separator, ph) {
			errs = append(errs, fmt.Errorf("template separator holds %s, which belongs to another field", ph))
		}
	}
	return errors.Join(errs...)
}

// ScoreIDs returns the answer token ids in tok: YesID/NoID where set (they
// must then name YesToken/NoToken if those are set too), else the tokens'
// ids (a vocabulary entry, as convert_tokens_to_ids, or text that encodes
// to one id, as tokenizer(token).input_ids[0] of a single-token answer).
func (t Template) ScoreIDs(tok *tokenizer.Tokenizer) (yes, no int, err error) {
	one := func(side, token string, id *int) (int, error) {
		if token == "" {
			return *id, nil
		}
		got, ok := tok.TokenID(token)
		if !ok {
			ids := tok.EncodeIDs(token)
			if len(ids) != 1 {
				return 0, fmt.Errorf("template %s_token %q is %d tokens in this tokenizer, want 1", side, token, len(ids))
			}
			got = ids[0]
		}
		if id != nil && *id != got {
			return 0, fmt.Errorf("template %s_id %d but %s_token %q is id %d in this tokenizer", side, *id, side, token, got)
		}
		return got, nil
	}
	yes, errY := one("yes", t.YesToken, t.YesID)
	no, errN := one("no", t.NoToken, t.NoID)
	if err := errors.Join(errY, errN); err != nil {
		return 0, 0, err
	}
	if yes == no {
		return 0, 0, fmt.Errorf("template yes and no answers are the same id %d", yes)
	}
	return yes, no, nil
}

// WithIDs returns t with its answer ids recorded.
func (t Template) WithIDs(yes, no int) Template {
	t.YesID, t.NoID = &yes, &no
	return t
}

// ReadTemplateFile reads and validates a template file
// (rerankd_template.json's format).
func ReadTemplateFile(path string) (Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Template{}, fmt.Errorf("template: %w", err)
	}
	var t Template
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Template{}, fmt.Errorf("template %s: %w", path, err)
	}
	if err := t.Validate(); err != nil {
		return Template{}, fmt.Errorf("template %s: %w", path, err)
	}
	t.Source = path
	if t.sameText(mxbaiJoined()) {
		// Written by an earlier convert with the joined defect: the
		// folder meant mxbai's prompt, which is built in pieces.
		cur := MxbaiRerankV2Template()
		cur.YesID, cur.NoID, cur.Source = t.YesID, t.NoID, path+" (mxbai-rerank-v2, joined form of earlier versions read as pieces)"
		return cur, nil
	}
	return t, nil
}

// sameText reports whether t and o build the same prompt text with the
// same answer tokens (ids and Source aside).
func (t Template) sameText(o Template) bool {
	t.YesID, t.NoID, t.Source = nil, nil, ""
	o.YesID, o.NoID, o.Source = nil, nil, ""
	return t == o
}
