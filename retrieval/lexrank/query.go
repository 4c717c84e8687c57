package lexrank

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/bm25"
)

// boilerplate are words of the way a question or an agent's request is
// put, not of what it asks about. The list was written from generic
// question templates ("what kind of", "how many times", "do you
// remember", "tell me about"), not from the failures of any benchmark
// question; the query analysis of Ranking.QueryWords drops them.
var boilerplate = func() map[string]bool {
	words := []string{
		"kind", "kinds", "type", "types", "sort", "thing", "things", "stuff",
		"likely", "probably", "ever", "many", "much", "something", "anything",
		"someone", "anyone", "somebody", "anybody", "tell", "remember", "recall",
		"mention", "mentioned", "know", "knew", "please", "describe",
		"say", "said", "think", "also", "exactly", "specific", "particular",
		"user", "assistant", "conversation", "chat", "discuss", "discussed",
	}
	m := map[string]bool{}
	for _, w := range words {
		for _, t := range lexical.QueryTerms(w) {
			m[t] = true
		}
	}
	return m
}()

// queryAnalysis is what analyseQuery decided, for the span.
type queryAnalysis struct {
	terms, dropped, names int
	dates                 int // time terms read from the query (Fields.Time)
}

// analyseQuery turns text into weighted BM25 terms under r, analysed by
// an (the index's analyzer): plain terms of weight 1, boilerplate dropped
// (QueryWords; unless nothing would be left), names weighted by
// NameWeight. The boilerplate list is English, whose terms are the same
// in every CJK mode.
func analyseQuery(an *lexical.Analyzer, text string, r Ranking) ([]bm25.Term, queryAnalysis) {
	qterms := an.QueryTerms(text)
	var names map[string]bool
	if r.NameWeight != 0 && r.NameWeight != 1 {
		names = nameTerms(an, text)
	}
	var a queryAnalysis
	out := make([]bm25.Term, 0, len(qterms))
	for _, t := range qterms {
		if r.QueryWords && boilerplate[t] {
			a.dropped++
			continue
		}
		w := 1.0
		if names[t] {
			w = r.NameWeight
			a.names++
		}
		out = append(out, bm25.Term{Text: t, Weight: w})
	}
	if len(out) == 0 { // only boilerplate: it is all the query has
		a.dropped = 0
		for _, t := range qterms {
			out = append(out, bm25.Term{Text: t, Weight: 1})
		}
	}
	a.terms = len(out)
	return out, a
}

// nameTerms returns the terms of the query's capitalised words that do
// not start a sentence ("What did Caroline research?" → carolin): names
// of people, pets and places, as far as the writing shows them. A word
// after . ? ! or a line break, or at the start, is not taken: its capital
// says nothing.
func nameTerms(an *lexical.Analyzer, text string) map[string]bool {
	out := map[string]bool{}
	start := true
	for len(text) > 0 {
		r, n := utf8.DecodeRuneInString(text)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if strings.ContainsRune(".?!\n", r) {
				start = true
			}
			text = text[n:]
			continue
		}
		end := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' })
		if end < 0 {
			end = len(text)
		}
		word := text[:end]
		if !start && unicode.IsUpper(r) {
			for _, t := range an.QueryTerms(word) {
				out[t] = true
			}
		}
		start = false
		text = text[end:]
	}
	return out
}
