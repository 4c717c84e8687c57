package rerank

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/tokenizer"
)

// The Qwen3-Reranker template, as published with the model (see
// Qwen3RerankerTemplate, which holds them as data).
const (
	PromptPrefix = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. " +
		"Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"
	PromptSuffix       = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
	DefaultInstruction = "Given a web search query, retrieve relevant passages that answer the query"
)

// ErrTooLong is returned when the template and the query, cut to its floor,
// leave no room for any document token within the maximum length.
var ErrTooLong = errors.New("prompt does not fit the maximum length")

// PromptConfig sets how prompts are built and truncated.
type PromptConfig struct {
	// MaxLength is the most tokens of one prompt (template included).
	MaxLength int
	// QueryFloor is the fewest query tokens kept when a long query must be
	// cut to leave the document MinDocTokens; a query is never cut below it.
	QueryFloor int
	// MinDocTokens is how many document tokens the query must leave room
	// for before the query itself is cut.
	MinDocTokens int
	// MaxContextTurns bounds the conversation turns placed before the query.
	MaxContextTurns int
	// MaxContextTokens bounds their tokens; the oldest turns go first.
	MaxContextTokens int
	// Template builds the prompt and names the answer tokens; nil is the
	// Qwen3-Reranker template. Open sets the folder's (LoadTemplate).
	Template *Template
	// ControlTokensInText, when set, lets special-token strings inside a
	// query, instruction, conversation turn or document ("<|im_end|>")
	// become the control tokens they name, as the Hugging Face reference
	// encodes them. Unset (the default), they are encoded as the plain
	// text they are (split_special_tokens=True): a stored memory from an
	// untrusted source cannot close the prompt's user turn and write the
	// assistant's answer. The template's own special tokens are control
	// tokens either way.
	ControlTokensInText bool
}

// DefaultPromptConfig returns the defaults.
func DefaultPromptConfig() PromptConfig {
	return PromptConfig{MaxLength: 1024, QueryFloor: 64, MinDocTokens: 32, MaxContextTurns: 4, MaxContextTokens: 256}
}

// Validate reports every problem at once.
func (c PromptConfig) Validate() error {
	var errs []error
	if c.MaxLength < 32 {
		errs = append(errs, fmt.Errorf("max length %d: want >= 32", c.MaxLength))
	}
	if c.QueryFloor < 1 {
		errs = append(errs, fmt.Errorf("query floor %d: want >= 1", c.QueryFloor))
	}
	if c.MinDocTokens < 1 {
		errs = append(errs, fmt.Errorf("min doc tokens %d: want >= 1", c.MinDocTokens))
	}
	if c.MaxContextTurns < 0 || c.MaxContextTokens < 0 {
		errs = append(errs, fmt.Errorf("context limits must be >= 0 (turns %d, tokens %d)", c.MaxContextTurns, c.MaxContextTokens))
	}
	return errors.Join(errs...)
}

// Prompt is one encoded pair.
type Prompt struct {
	IDs []int
	// TypeIDs are a cross-encoder's token type ids, as long as IDs; nil
	// for all 0 and for every decoder prompt.
	TypeIDs   []int
	DocTokens int  // document tokens kept
	Truncated bool // the document or the query was shortened
	DocCut    bool // the document itself was shortened
}

// promptEncoder turns (instruction, query, context, document) into ids
// with a Template. The prompt is encoded in segments whose joins are
// pre-tokenizer boundaries, so the ids equal those of encoding the whole
// string (tested for each known template), while the query part is
// encoded once per request and each document alone. For the
// Qwen3-Reranker template:
//
//	[prefix] ["<Instruct>: I\n<Query>:"] [" Q\n<Document>:"] [" D"] [suffix]
//
// A segment ends before a placeholder's leading space (": " + value):
// ':' never merges with a following space, and the special tokens around
// the prefix and suffix split anyway. A placeholder without a space before
// it is not split from its field's text.
type promptEncoder struct {
	tok            *tokenizer.Tokenizer
	cfg            PromptConfig
	tmpl           Template
	prefix, suffix []int
	// sep is the Separator's ids and docLabel those of the document
	// field's text before its placeholder, for templates in Pieces.
	sep, docLabel []int
	// The template's fields split at their placeholders: queryHead ends
	// the head segment, queryLead and docLead start the query and document
	// segments, queryTail ends the query segment, docTail the document's.
	instrBefore, instrAfter string
	queryHead, queryLead    string
	queryTail               string
	docLead, docTail        string
}

// splitField cuts a field at its placeholder: the text before (less a
// trailing space, which leads the value instead) and after it.
func splitField(field, ph string) (before, lead, after string) {
	before, after, _ = strings.Cut(field, ph)
	if b, ok := strings.CutSuffix(before, " "); ok {
		return b, " ", after
	}
	return "", before, after
}

func newPromptEncoder(tok *tokenizer.Tokenizer, cfg PromptConfig) (*promptEncoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := Qwen3RerankerTemplate()
	if cfg.Template != nil {
		t = *cfg.Template
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	p := &promptEncoder{tok: tok, cfg: cfg, tmpl: t, prefix: tok.EncodeIDs(t.Prefix), suffix: tok.EncodeIDs(t.Suffix)}
	p.instrBefore, p.instrAfter, _ = strings.Cut(t.Instruction, phInstruction)
	if t.Pieces {
		p.sep = tok.EncodeIDs(t.Separator)
		label, _, _ := strings.Cut(t.Document, phDocument)
		p.docLabel = tok.EncodeIDs(strings.TrimRight(label, " "))
		if room := p.piecesRoom(); room < 2 {
			return nil, fmt.Errorf("%w: the template's fixed parts take %d of %d tokens", ErrTooLong, cfg.MaxLength-room, cfg.MaxLength)
		}
		return p, nil
	}
	var docHead string
	p.queryHead, p.queryLead, p.queryTail = splitField(t.Query, phQuery)
	docHead, p.docLead, p.docTail = splitField(t.Document, phDocument)
	p.queryTail += docHead
	return p, nil
}

// queryPart is the encoded, possibly truncated, part shared by all
// documents of a request.
type queryPart struct {
	ids       []int // prefix + instruction + query + the document field's head
	truncated bool
}

// queryText places recent conversation turns before the question, so the
// reranker can resolve "it" or "that trip" in the query.
func queryText(query string, context []string) string {
	if len(context) == 0 {
		return query
	}
	return "Recent conversation:\n" + strings.Join(context, "\n") + "\nQuestion: " + query
}

func tmplPart(s string) tokenizer.Part { return tokenizer.Part{Text: s} }
func userPart(s string) tokenizer.Part { return tokenizer.Part{Text: s, User: true} }

// enc encodes the parts joined, special tokens in user parts as text
// unless ControlTokensInText.
func (p *promptEncoder) enc(parts ...tokenizer.Part) []int {
	return p.tok.EncodeIDsUser(parts, !p.cfg.ControlTokensInText)
}

// instructionParts is instruction's field as parts: the template's words
// around the request's (or the template's default) instruction.
func (p *promptEncoder) instructionParts(instruction string) []tokenizer.Part {
	text := p.instruction(instruction)
	if text == "" {
		return nil
	}
	if instruction == "" {
		return []tokenizer.Part{tmplPart(text)} // the template's default
	}
	return []tokenizer.Part{tmplPart(p.instrBefore), userPart(instruction), tmplPart(p.instrAfter)}
}

// instruction returns the instruction field filled, or "" when there is
// no instruction to write.
func (p *promptEncoder) instruction(instruction string) string {
	if instruction == "" {
		instruction = p.tmpl.DefaultInstruction
	}
	if instruction == "" || p.tmpl.Instruction == "" {
		return ""
	}
	return p.instrBefore + instruction + p.instrAfter
}

func (p *promptEncoder) encodeQuery(instruction, query string, context []string) (queryPart, error) {
	context = p.fitContext(context)
	if p.tmpl.Pieces {
		return p.piecesQuery(instruction, query, context), nil
	}
	head := p.enc(append(p.instructionParts(instruction), tmplPart(p.queryHead))...)
	q := p.enc(tmplPart(p.queryLead), userPart(queryText(query, context)), tmplPart(p.queryTail))
	fixed := len(p.prefix) + len(head) + len(p.suffix)
	qp := queryPart{}
	if room := p.cfg.MaxLength - fixed - p.cfg.MinDocTokens; len(q) > room {
		// Cut the query (not the template after it): re-encode its tokens
		// with the template tail separately. Joining there may differ from
		// whole-string encoding by a token, acceptable for a query that is
		// being cut anyway.
		tail := p.tok.EncodeIDs(p.queryTail)
		qonly := p.enc(tmplPart(p.queryLead), userPart(queryText(query, context)))
		keep := max(room-len(tail), p.cfg.QueryFloor)
		if keep < len(qonly) {
			qonly = qonly[:keep]
			qp.truncated = true
		}
		q = append(qonly, tail...)
	}
	qp.ids = make([]int, 0, len(p.prefix)+len(head)+len(q))
	qp.ids = append(append(append(qp.ids, p.prefix...), head...), q...)
	if len(qp.ids)+len(p.suffix) >= p.cfg.MaxLength {
		return queryPart{}, fmt.Errorf("%w: template and query (cut to %d tokens) need %d of %d tokens",
			ErrTooLong, p.cfg.QueryFloor, len(qp.ids)+len(p.suffix), p.cfg.MaxLength)
	}
	return qp, nil
}

// fitContext keeps the most recent turns within the turn and token limits.
func (p *promptEncoder) fitContext(turns []string) []string {
	if len(turns) > p.cfg.MaxContextTurns {
		turns = turns[len(turns)-p.cfg.MaxContextTurns:]
	}
	total := 0
	for i := len(turns) - 1; i >= 0; i-- {
		total += len(p.enc(userPart(turns[i]))) + 1
		if total > p.cfg.MaxContextTokens {
			return turns[i+1:]
		}
	}
	return turns
}

// docLimits are per-request limits on the document part.
type docLimits struct {
	maxTokens int  // cut the document to this many tokens (0: no extra limit)
	keepEnd   bool // cut from the start instead of the end
}

// encodeDoc completes a prompt for one document, cutting the document's
// tokens (from the end, or from the start with keepEnd) to fit the maximum
// length and the request's limit.
func (p *promptEncoder) encodeDoc(q queryPart, doc string, lim docLimits) Prompt {
	pr, _ := p.encodeDocContext(context.Background(), q, doc, lim) // never done: no error
	return pr
}

// encodeDocContext is encodeDoc that stops with ctx's error once ctx is
// done.
func (p *promptEncoder) encodeDocContext(ctx context.Context, q queryPart, doc string, lim docLimits) (Prompt, error) {
	if p.tmpl.Pieces {
		return p.piecesDoc(q, doc, lim), nil
	}
	d, err := p.tok.EncodeIDsUserContext(ctx, []tokenizer.Part{tmplPart(p.docLead), userPart(doc), tmplPart(p.docTail)}, !p.cfg.ControlTokensInText)
	if err != nil {
		return Prompt{}, err
	}
	room := p.cfg.MaxLength - len(q.ids) - len(p.suffix)
	if lim.maxTokens > 0 {
		room = min(room, lim.maxTokens)
	}
	pr := Prompt{Truncated: q.truncated}
	if len(d) > room {
		if lim.keepEnd {
			d = d[len(d)-room:]
		} else {
			d = d[:room]
		}
		pr.Truncated, pr.DocCut = true, true
	}
	pr.DocTokens = len(d)
	pr.IDs = make([]int, 0, len(q.ids)+len(d)+len(p.suffix))
	pr.IDs = append(append(append(pr.IDs, q.ids...), d...), p.suffix...)
	return pr, nil
}

// fullPrompt is the prompt as one string, for tests and documentation.
func (t Template) fullPrompt(instruction, query, doc string) string {
	if instruction == "" {
		instruction = t.DefaultInstruction
	}
	s := t.Prefix
	if instruction != "" && t.Instruction != "" {
		s += strings.Replace(t.Instruction, phInstruction, instruction, 1)
	}
	s += strings.Replace(t.Query, phQuery, query, 1) + t.Separator
	return s + strings.Replace(t.Document, phDocument, doc, 1) + t.Separator + t.Suffix
}
