package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/retrieval/lexrank"
)

// rankingFlagNames are the flags rankingFlags defines, space-separated
// with a space at each end.
const rankingFlagNames = " k1 b query-words name-weight expand-terms expand-docs expand-weight context-window context-neighbour context-source field-speaker field-time field-speaker-b field-time-b "

// rankingFlags defines the lexical ranking's flags on fs (eval locomo and
// eval zh share them). The returned function, called after parsing, gives
// the named ranking ("default" or "bm25", lexrank.RankingByName) with
// each flag given on top, validated.
func rankingFlags(fs *flag.FlagSet) func(name string) (lexrank.Ranking, error) {
	var rk lexrank.Ranking // flags override the named ranking's fields
	fs.Float64Var(&rk.K1, "k1", 0, "BM25 k1 (default: the ranking's)")
	fs.Float64Var(&rk.B, "b", 0, "BM25 b (default: the ranking's)")
	fs.BoolVar(&rk.QueryWords, "query-words", false, "query analysis: drop question boilerplate (default: the ranking's)")
	fs.Float64Var(&rk.NameWeight, "name-weight", 0, "query analysis: weight of capitalised names (default: the ranking's)")
	fs.IntVar(&rk.Expansion.Terms, "expand-terms", 0, "pseudo-relevance feedback: terms added, 0 off (default: the ranking's)")
	fs.IntVar(&rk.Expansion.Docs, "expand-docs", 0, "pseudo-relevance feedback: feedback memories (default: the ranking's)")
	fs.Float64Var(&rk.Expansion.Weight, "expand-weight", 0, "pseudo-relevance feedback: weight of the best added term (default: the ranking's)")
	fs.IntVar(&rk.Context.Window, "context-window", 0, "context: neighbours on each side within a source (default: the ranking's)")
	fs.Float64Var(&rk.Context.Neighbour, "context-neighbour", 0, "context: weight of the best neighbour's score (default: the ranking's)")
	fs.Float64Var(&rk.Context.Source, "context-source", 0, "context: weight of the source's best score (default: the ranking's)")
	fs.Float64Var(&rk.Fields.Speaker, "field-speaker", 0, "fields (BM25F): weight of the speaker field (metadata speaker), 0 off (default: the ranking's)")
	fs.Float64Var(&rk.Fields.Time, "field-time", 0, "fields (BM25F): weight of the time field (year, month, day), matched by the dates a question names, 0 off (default: the ranking's)")
	fs.Float64Var(&rk.Fields.SpeakerB, "field-speaker-b", 0, "fields (BM25F): length normalisation within the speaker field (default: the ranking's)")
	fs.Float64Var(&rk.Fields.TimeB, "field-time-b", 0, "fields (BM25F): length normalisation within the time field (default: the ranking's)")
	return func(name string) (lexrank.Ranking, error) {
		base, err := lexrank.RankingByName(name)
		if err != nil {
			return base, fmt.Errorf("--ranking: %w", err)
		}
		set := map[string]func(){
			"k1":                func() { base.K1 = rk.K1 },
			"b":                 func() { base.B = rk.B },
			"query-words":       func() { base.QueryWords = rk.QueryWords },
			"name-weight":       func() { base.NameWeight = rk.NameWeight },
			"expand-terms":      func() { base.Expansion.Terms = rk.Expansion.Terms },
			"expand-docs":       func() { base.Expansion.Docs = rk.Expansion.Docs },
			"expand-weight":     func() { base.Expansion.Weight = rk.Expansion.Weight },
			"context-window":    func() { base.Context.Window = rk.Context.Window },
			"context-neighbour": func() { base.Context.Neighbour = rk.Context.Neighbour },
			"context-source":    func() { base.Context.Source = rk.Context.Source },
			"field-speaker":     func() { base.Fields.Speaker = rk.Fields.Speaker },
			"field-time":        func() { base.Fields.Time = rk.Fields.Time },
			"field-speaker-b":   func() { base.Fields.SpeakerB = rk.Fields.SpeakerB },
			"field-time-b":      func() { base.Fields.TimeB = rk.Fields.TimeB },
		}
		fs.Visit(func(f *flag.Flag) {
			if apply, ok := set[f.Name]; ok {
				apply()
			}
		})
		if len(set) != len(strings.Fields(rankingFlagNames)) {
			panic("rankingFlagNames and the flags differ")
		}
		return base, base.Validate()
	}
}

// rankingFlagSet reports whether any of rankingFlags' flags is in set (the
// names of the flags given).
func rankingFlagSet(set map[string]bool) bool {
	for _, name := range strings.Fields(rankingFlagNames) {
		if set[name] {
			return true
		}
	}
	return false
}
