package lexrank

import (
	"cmp"
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/tracing/span"
)

// tracerName names the spans of the stage: retrieval's, whose spans
// these are.
const tracerName = "github.com/rerankd/rerankd/retrieval"

// Hit is one candidate of the lexical stage: its final lexical score and
// its raw BM25 score (0 for a memory only context brought in).
type Hit struct {
	ID          string
	Score, BM25 float64
}

// Stage ranks a query's memories in ix under r: query analysis, BM25
// (BM25F over text, speaker and time when r has Fields), then
// pseudo-relevance feedback and neighbour context when r has them.
// Each stage has its span, with counts only. allowed, when set, is what
// the search's filter accepts: BM25 keeps the depth best of those, and
// context brings in no other neighbour.
func Stage(ctx context.Context, ix *index.Set, text string, depth int, r Ranking, allowed *index.Allowed) []Hit {
	var ids []string
	var allow func(string) bool
	if allowed != nil {
		ids, allow = allowed.IDs, allowed.Has
		if ids == nil {
			ids = []string{}
		}
	}
	_, asp := span.Start(ctx, tracerName, "rerankd.query_analysis")
	terms, a := analyseQuery(ix.Lex.Analyzer(), text, r)
	if r.Fields.Time > 0 {
		for _, t := range queryTimeTerms(text) {
			terms = append(terms, bm25.Term{Text: t, Weight: 1})
			a.dates++
		}
	}
	asp.SetAttributes(attribute.Int("rerankd.terms", a.terms), attribute.Int("rerankd.dropped", a.dropped),
		attribute.Int("rerankd.names", a.names), attribute.Int("rerankd.time_terms", a.dates))
	asp.End()
	params, fields := bm25.Config{K1: r.K1, B: r.B}, r.Fields.params()

	_, bsp := span.Start(ctx, tracerName, "rerankd.bm25", attribute.Bool("rerankd.fields", r.Fields.On()))
	hits := ix.Lex.SearchAllowed(terms, depth, params, fields, ids)
	bsp.SetAttributes(attribute.Int("rerankd.hits", len(hits)))
	bsp.End()

	if x := r.Expansion; x.Terms > 0 && len(hits) > 0 {
		_, xsp := span.Start(ctx, tracerName, "rerankd.expansion")
		added := expansionTerms(ix.Lex, terms, hits[:min(x.Docs, len(hits))], x)
		if len(added) > 0 {
			hits = ix.Lex.SearchAllowed(append(slices.Clip(terms), added...), depth, params, fields, ids)
		}
		xsp.SetAttributes(attribute.Int("rerankd.added_terms", len(added)), attribute.Int("rerankd.hits", len(hits)))
		xsp.End()
	}

	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{ID: h.ID, Score: h.Score, BM25: h.Score}
	}
	if r.Context.On() && len(hits) > 0 {
		_, csp := span.Start(ctx, tracerName, "rerankd.context", attribute.Int("rerankd.candidates", len(out)))
		out = withContext(ix.Order, hits, r.Context, depth, allow)
		csp.SetAttributes(attribute.Int("rerankd.kept", len(out)))
		csp.End()
	}
	return out
}

// expansionTerms picks the feedback terms (see Expansion): each term of a
// feedback memory gets Σ norm(memory) × idf(term); terms already in the
// query and stopwords are skipped; the best x.Terms are returned with
// weight x.Weight × vote/best vote, ties by term.
func expansionTerms(lex *bm25.Index, query []bm25.Term, fb []bm25.Hit, x Expansion) []bm25.Term {
	inQuery := make(map[string]bool, len(query))
	for _, t := range query {
		inQuery[t.Text] = true
	}
	votes := map[string]float64{}
	for _, h := range fb {
		for _, t := range lex.DocTerms(h.ID) {
			if !inQuery[t] && !lexical.IsStopword(t) {
				votes[t] += h.Norm
			}
		}
	}
	cands := make([]bm25.Term, 0, len(votes))
	for t, v := range votes {
		if idf, ok := lex.IDF(t); ok && v > 0 {
			cands = append(cands, bm25.Term{Text: t, Weight: v * idf})
		}
	}
	slices.SortFunc(cands, func(a, b bm25.Term) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Text, b.Text)
	})
	cands = cands[:min(x.Terms, len(cands))]
	if len(cands) == 0 {
		return nil
	}
	best := cands[0].Weight
	for i := range cands {
		cands[i].Weight = x.Weight * cands[i].Weight / best
	}
	return cands
}

// withContext applies Context to the BM25 hits (see Context): own score
// normalised to the best hit, plus the weighted best neighbour and best
// source scores; neighbours of hits join as candidates. The depth best
// are returned, by score descending then ID. The order is read under one
// lock, and the accumulators live in one slice: this stage must stay
// cheap next to BM25 itself (BenchmarkSearchRanking).
func withContext(order *index.Order, hits []bm25.Hit, c Context, depth int, allow func(string) bool) []Hit {
	type acc struct {
		id            string
		own, bm25, nb float64
		source        string
	}
	accs := make([]acc, 0, len(hits)*(1+2*c.Window))
	at := make(map[string]int, cap(accs))
	get := func(id, source string) *acc {
		i, ok := at[id]
		if !ok {
			i = len(accs)
			at[id] = i
			accs = append(accs, acc{id: id, source: source})
		}
		return &accs[i]
	}
	best := map[string]float64{} // by source
	order.Read(func(r index.Reader) {
		for _, h := range hits {
			src := r.Around(h.ID, c.Window, func(n index.Neighbour, src string) {
				if allow != nil && !allow(n.ID) {
					return
				}
				b := get(n.ID, src)
				b.nb = max(b.nb, h.Norm)
			})
			a := get(h.ID, src)
			a.own, a.bm25, a.source = h.Norm, h.Score, src
			if src != "" {
				best[src] = max(best[src], h.Norm)
			}
		}
	})
	out := make([]Hit, len(accs))
	for i, a := range accs {
		out[i] = Hit{ID: a.id, Score: a.own + c.Neighbour*a.nb + c.Source*best[a.source], BM25: a.bm25}
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if x := cmp.Compare(b.Score, a.Score); x != 0 {
			return x
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(depth, len(out))]
}
