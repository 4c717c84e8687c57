package embed

import (
	"context"
	"errors"
)

// Errors of one embedding call (Model.EmbedWith), beyond the vector checks.
var (
	// ErrEmptyText marks an empty or blank text: it has no meaning to embed.
	ErrEmptyText = errors.New("empty text")
	// ErrTooLong marks a text longer than the model's input limit under
	// Options.NoTruncate.
	ErrTooLong = errors.New("text is longer than the model's input limit")
	// ErrUnknownPrompt marks an Options.PromptName the model folder does
	// not define.
	ErrUnknownPrompt = errors.New("unknown prompt name")
	// ErrNoMatryoshka marks an Options.Dim for a model not trained to be
	// cut (only Qwen3-Embedding-style models are), or a Dim outside
	// [1, the model's size].
	ErrNoMatryoshka = errors.New("the model does not give vectors of this size")
)

// Options adjust one embedding call. The zero value embeds documents
// exactly as the memory search stores them: the folder's document prompt,
// texts cut at their end to the model's input limit, unit vectors of the
// embedder's configured size.
type Options struct {
	// Query embeds the texts as queries (the instruction or the folder's
	// "query" prompt), as the memory search embeds its queries.
	Query bool
	// PromptName, when set, places the folder's sentence-transformers
	// prompt of that name (config_sentence_transformers.json "prompts")
	// before every text instead of the query or document prompt.
	PromptName string
	// CutStart cuts a too-long text at its start instead of its end (the
	// template's own tokens are kept).
	CutStart bool
	// NoTruncate refuses a too-long text (ErrTooLong) instead of cutting it.
	NoTruncate bool
	// Dim, when > 0, keeps the first Dim values and re-normalises
	// (Matryoshka); a model without that training refuses it
	// (ErrNoMatryoshka). 0: the embedder's configured size.
	Dim int
	// Raw returns the pooled vectors as the model gives them, not scaled
	// to unit length (text-embeddings-inference's normalize=false).
	Raw bool
}

// Result is one call's vectors and the tokens each input took (prompt and
// template tokens included), in input order.
type Result struct {
	Vectors [][]float32
	Tokens  []int
	// Truncated counts the inputs that were cut to fit.
	Truncated int
}

// Model is an embedding model: model.Embedder meets it.
type Model interface {
	EmbedWith(ctx context.Context, texts []string, o Options) (Result, error)
	// Dim is the size of the vectors of a call with Options.Dim 0.
	Dim() int
}
