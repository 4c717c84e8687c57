package rerank

import "context"

// DefaultMaxDocTokens is the served per-document cut by default: none, so
// a document keeps every token the prompt's maximum length leaves it
// (serve.Config.MaxTokensPerDoc, rerankd serve --max-tokens-per-doc).
const DefaultMaxDocTokens = 0

// Reranker adapts a scorer to the memory search pipeline
// (retrieval.Reranker): the candidates' texts become the documents of one
// Request, under the instruction and per-document cut the server applies,
// and each document's probability is its score. Served memory search and
// `eval locomo` rerank through it alike, so the evaluation measures what
// is served.
type Reranker struct {
	// Score scores one request: a server backend (through its scheduler
	// queue, calibrated when the server is), or a Scorer's Score.
	Score func(ctx context.Context, r Request) ([]Score, error)
	// Instruction is the task ("": the template's default).
	Instruction string
	// MaxDocTokens cuts every document to this many tokens (0: only the
	// prompt's maximum length applies); DefaultMaxDocTokens is the
	// server's default.
	MaxDocTokens int
}

// Rerank scores texts against query and returns their probabilities, in
// order (the pipeline checks there is one per text).
func (r Reranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	scores, err := r.Score(ctx, Request{Instruction: r.Instruction, Query: query, Docs: texts, MaxDocTokens: r.MaxDocTokens})
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(scores))
	for i, sc := range scores {
		out[i] = sc.Score
	}
	return out, nil
}
