package scoring

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/tracing/span"
)

// tracerName names the instrumentation scope of this package's spans.
const tracerName = "github.com/rerankd/rerankd/scoring"

// Score calls b.Score inside a "rerankd.score" span, so /rerank and the
// rerank stage of memory search trace the backend the same way.
func Score(ctx context.Context, b Backend, r rerank.Request) (Scored, error) {
	ctx, sp := span.Start(ctx, tracerName, "rerankd.score", attribute.String("rerankd.backend", b.Name()),
		attribute.Int("rerankd.documents", len(r.Docs)))
	out, err := b.Score(ctx, r)
	span.End(sp, err)
	return out, err
}

// memoryScorer is a Backend as the memory service's retrieval.Scorer:
// through rerank.Reranker, the one adapter from a scorer to the search
// pipeline (eval locomo reranks through it too), each search's
// candidates are the documents of one traced request, cut at
// maxDocTokens.
type memoryScorer struct {
	b            Backend
	maxDocTokens int
}

func (m memoryScorer) Score(ctx context.Context, instruction, query string, texts []string) ([]float64, error) {
	rr := rerank.Reranker{Instruction: instruction, MaxDocTokens: m.maxDocTokens,
		Score: func(ctx context.Context, r rerank.Request) ([]rerank.Score, error) {
			out, err := Score(ctx, m.b, r)
			return out.Scores, err
		}}
	return rr.Rerank(ctx, query, texts)
}

// Reranking is how the memory service reranks with b (for
// retrieval.Config.Rerank): every search by default unless b is the
// lexical default (whose word-overlap scores rerank only when asked),
// under the calibration's threshold when b is calibrated, at most
// maxDocs candidates (the most documents one /rerank call may have),
// each cut at maxDocTokens (0: only the prompt's length limit).
func Reranking(b Backend, maxDocs, maxDocTokens int) retrieval.Reranking {
	return retrieval.Reranking{Scorer: memoryScorer{b: b, maxDocTokens: maxDocTokens}, ByDefault: !IsLexical(b),
		Threshold: DefaultThreshold(b), MaxDepth: maxDocs}
}

// IsLexical reports whether b is the lexical default, calibrated or not.
func IsLexical(b Backend) bool {
	if c, ok := b.(*Calibrated); ok {
		b = c.Backend
	}
	_, ok := b.(*Lexical)
	return ok
}
