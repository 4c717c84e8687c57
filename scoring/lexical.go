package scoring

import (
	"context"
	"strings"
	"time"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/rerank"
)

// Lexical is the embedded default backend: BM25 over the request's own
// documents, mapped to (0, 1). It needs no model files, so a fresh install
// answers real requests; its scores measure word overlap, not calibrated
// relevance, and ignore the instruction and context. Raw scores are the
// BM25 values.
type Lexical struct{ s *lexical.Scorer }

// NewLexical returns the default backend.
func NewLexical(s *lexical.Scorer) *Lexical { return &Lexical{s: s} }

// Name implements Backend.
func (l *Lexical) Name() string { return "lexical-bm25" }

// ModelID implements Backend.
func (l *Lexical) ModelID() string { return lexical.ModelID }

// MaxTokens implements Backend: documents are not cut.
func (l *Lexical) MaxTokens() int { return 0 }

// Score implements Backend.
func (l *Lexical) Score(ctx context.Context, r rerank.Request) (Scored, error) {
	if strings.TrimSpace(r.Query) == "" {
		return Scored{}, rerank.ErrEmptyQuery
	}
	if err := ctx.Err(); err != nil {
		return Scored{}, err
	}
	start := time.Now()
	res := l.s.Score(r.Query, r.Docs)
	out := make([]rerank.Score, len(res))
	for i, x := range res {
		out[i] = rerank.Score{Score: x.Score, Logit: x.Raw, Tokens: x.Tokens}
	}
	return Scored{Scores: out, Timing: Timing{Inference: time.Since(start)}}, nil
}

// Close implements Backend.
func (l *Lexical) Close(context.Context) error { return nil }
