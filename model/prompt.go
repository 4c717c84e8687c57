package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/tokenizer"
)

// The Qwen3-Reranker template, as published with the model.
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
	IDs       []int
	DocTokens int  // document tokens kept
	Truncated bool // the document or the query was shortened
	DocCut    bool // the document itself was shortened
}

// promptEncoder turns (instruction, query, context, document) into ids. The
// prompt is encoded in segments whose joins are pre-tokenizer boundaries, so
// the ids equal those of encoding the whole string (tested), while the query
// part is encoded once per request and each document alone:
//
//	[prefix] ["<Instruct>: I\n<Query>:"] [" Q\n<Document>:"] [" D"] [suffix]
//
// Each join is a ':' followed by a space: ':' never merges with a following
// space, and the special tokens around the prefix and suffix split anyway.
type promptEncoder struct {
	tok            *tokenizer.Tokenizer
	cfg            PromptConfig
	prefix, suffix []int
}

func newPromptEncoder(tok *tokenizer.Tokenizer, cfg PromptConfig) (*promptEncoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &promptEncoder{tok: tok, cfg: cfg, prefix: tok.EncodeIDs(PromptPrefix), suffix: tok.EncodeIDs(PromptSuffix)}, nil
}

// queryPart is the encoded, possibly truncated, part shared by all
// documents of a request.
type queryPart struct {
	ids       []int // prefix + instruction + query + "\n<Document>:"
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

func (p *promptEncoder) encodeQuery(instruction, query string, context []string) (queryPart, error) {
	if instruction == "" {
		instruction = DefaultInstruction
	}
	context = p.fitContext(context)
	head := p.tok.EncodeIDs("<Instruct>: " + instruction + "\n<Query>:")
	q := p.tok.EncodeIDs(" " + queryText(query, context) + "\n<Document>:")
	fixed := len(p.prefix) + len(head) + len(p.suffix)
	qp := queryPart{}
	if room := p.cfg.MaxLength - fixed - p.cfg.MinDocTokens; len(q) > room {
		// Cut the query (not the template after it): re-encode its tokens
		// with the template tail separately. Joining there may differ from
		// whole-string encoding by a token, acceptable for a query that is
		// being cut anyway.
		tail := p.tok.EncodeIDs("\n<Document>:")
		qonly := p.tok.EncodeIDs(" " + queryText(query, context))
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
		total += len(p.tok.EncodeIDs(turns[i])) + 1
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
	d := p.tok.EncodeIDs(" " + doc)
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
	return pr
}

// fullPrompt is the prompt as one string, for tests and documentation.
func fullPrompt(instruction, query, doc string) string {
	if instruction == "" {
		instruction = DefaultInstruction
	}
	return PromptPrefix + "<Instruct>: " + instruction + "\n<Query>: " + query + "\n<Document>: " + doc + PromptSuffix
}
