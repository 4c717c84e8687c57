package lexrank

import (
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/bm25"
)

// Ranking is how the lexical first stage ranks a query's candidates:
// BM25 with per-query parameters, optionally field-aware (BM25F over
// text, speaker and time), then optional query analysis, pseudo-
// relevance feedback and neighbour context (see the package doc for the
// order). DefaultRanking is what a search without its own uses; PlainBM25
// is BM25 alone, as before these stages existed.
type Ranking struct {
	// K1 and B are the BM25 parameters of this query (lexical.CheckK1:
	// k1 in [0, 1000]; lexical.CheckB: b in [0, 1]); they apply at search
	// time, so any index serves any.
	K1, B float64
	// QueryWords drops question and request boilerplate ("what kind of",
	// "tell me", "remember") from the query: such words are in nearly
	// every question an agent asks and in few memories, so their IDF is
	// high and their matches are noise. A query of boilerplate only keeps
	// its words.
	QueryWords bool
	// NameWeight multiplies the weight of query terms from capitalised
	// words that do not start a sentence (names of people, places, pets),
	// which carry most of the evidence in a question about a person. 1
	// (or 0, the zero value) leaves them as they are; must be in [0, 10].
	NameWeight float64
	// Expansion is pseudo-relevance feedback; off when Terms is 0.
	Expansion Expansion
	// Context propagates scores between memories of the same source;
	// off when both weights are 0.
	Context Context
	// Fields matches the query against each memory's speaker and time as
	// well as its text (BM25F); off when both weights are 0.
	Fields Fields
}

// Expansion is RM3-style pseudo-relevance feedback (Abdul-Jaleel et al.,
// "UMass at TREC 2004"; Lavrenko and Croft's relevance model): the first
// pass's top Docs memories vote for their terms, each vote weighted by
// the memory's normalised score and the term's IDF (Robertson's offer
// weight), and the best Terms terms not already in the query are added,
// the strongest at weight Weight relative to an original term.
type Expansion struct {
	Docs   int     // feedback memories, 1..50
	Terms  int     // added terms, 0 (off)..50
	Weight float64 // weight of the best added term, (0, 1]
}

// Context is neighbour and source-level evidence: a memory's lexical
// score s (normalised to the best hit, in [0, 1]) becomes
//
//	s + Neighbour·max{s(j) : j within Window places of it in its source}
//	  + Source·max{s(j) : j in its source}
//
// so "Yes, it was amazing!" scores with the turn it answers, and every
// turn of the session that matched best rises with it (the passage plus
// document evidence of Callan, "Passage-level evidence in document
// retrieval", SIGIR 1994). Memories within Window of a hit join the
// candidates even without a term of the query: retrieval recall then
// covers the answer that never repeats the question's words. Sources
// come from Memory.Source, order from Memory.Time (ties by ID).
type Context struct {
	Window    int     // places on each side, 1..20
	Neighbour float64 // weight of the best neighbour's score, [0, 2]
	Source    float64 // weight of the source's best score, [0, 2]
}

// DefaultExpansion is the expansion a client turns on without saying
// more: the values the LoCoMo grid preferred alone (5 memories, 20 terms,
// weight 0.4).
func DefaultExpansion() Expansion { return Expansion{Docs: 5, Terms: 20, Weight: 0.4} }

// DefaultFields are the field weights a client turns on without saying
// more: the values the LoCoMo grid preferred alone (`eval locomo
// --ranking bm25 --cv fields`: speaker 2, time 4; lengths not normalised).
func DefaultFields() Fields { return Fields{Speaker: 2, Time: 4} }

// PlainBM25 is BM25 (k1 1.2, b 0.75) with no other stage: the ranking
// of earlier releases, selectable by name ("bm25").
func PlainBM25() Ranking { return Ranking{K1: 1.2, B: 0.75} }

// DefaultRanking is the ranking chosen by leave-one-conversation-out
// cross-validation on the LoCoMo development split (`eval locomo
// --ranking bm25 --cv combined`, the in-sample best and three folds'
// choice of five; figures in benchmarks/locomo/README.md): BM25 k1 1.2,
// b 0.1 (short memories gain little from length normalisation), field-
// aware matching with the speaker and time fields at weight 4 each, and
// context over 2 neighbours on each side with weights 0.5 and 0.5. Query
// analysis and expansion lost on the held-out conversations and stay off.
func DefaultRanking() Ranking {
	return Ranking{K1: 1.2, B: 0.1, Context: Context{Window: 2, Neighbour: 0.5, Source: 0.5},
		Fields: Fields{Speaker: 4, Time: 4}}
}

// Ranking names accepted by RankingByName.
const (
	RankingDefault = "default"
	RankingBM25    = "bm25"
)

// RankingByName returns the named ranking: "default" (or "") or "bm25".
func RankingByName(name string) (Ranking, error) {
	switch name {
	case "", RankingDefault:
		return DefaultRanking(), nil
	case RankingBM25:
		return PlainBM25(), nil
	}
	return Ranking{}, fmt.Errorf("name %q: want %q or %q", name, RankingDefault, RankingBM25)
}

// Validate reports every invalid field at once.
func (r Ranking) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	// The rule of the index and of the scan level's scorer, so a ranking
	// accepted here is served at every level.
	for _, err := range []error{lexical.CheckK1(r.K1), lexical.CheckB(r.B)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !(r.NameWeight >= 0 && r.NameWeight <= 10) {
		bad("name_weight %v: want a number in [0, 10]", r.NameWeight)
	}
	if x := r.Expansion; x.Terms != 0 {
		if x.Terms < 0 || x.Terms > 50 {
			bad("expansion.terms %d: want 0..50", x.Terms)
		}
		if x.Docs < 1 || x.Docs > 50 {
			bad("expansion.docs %d: want 1..50", x.Docs)
		}
		if !(x.Weight > 0 && x.Weight <= 1) {
			bad("expansion.weight %v: want a number in (0, 1]", x.Weight)
		}
	} else if x.Terms < 0 {
		bad("expansion.terms %d: want 0..50", x.Terms)
	}
	for _, f := range []struct {
		name string
		w, b float64
	}{{"speaker", r.Fields.Speaker, r.Fields.SpeakerB}, {"time", r.Fields.Time, r.Fields.TimeB}} {
		if !(f.w >= 0 && f.w <= bm25.MaxFieldWeight) {
			bad("fields.%s %v: want a number in [0, %d]", f.name, f.w, bm25.MaxFieldWeight)
		}
		if !(f.b >= 0 && f.b <= 1) {
			bad("fields.%s_b %v: want a number in [0, 1]", f.name, f.b)
		}
	}
	if c := r.Context; c.On() || c.Window != 0 {
		if c.Window < 1 || c.Window > 20 {
			bad("context.window %d: want 1..20", c.Window)
		}
		if !(c.Neighbour >= 0 && c.Neighbour <= 2) {
			bad("context.neighbour %v: want a number in [0, 2]", c.Neighbour)
		}
		if !(c.Source >= 0 && c.Source <= 2) {
			bad("context.source %v: want a number in [0, 2]", c.Source)
		}
	}
	return errors.Join(errs...)
}

// On reports whether any context stage is on.
func (c Context) On() bool { return c.Neighbour != 0 || c.Source != 0 }

// Staged reports whether a stage beyond BM25 changes scores, so that the
// lexical score ("lexical") differs from the BM25 one ("bm25").
func (r Ranking) Staged() bool {
	return r.QueryWords || (r.NameWeight != 0 && r.NameWeight != 1) || r.Expansion.Terms > 0 || r.Context.On() || r.Fields.On()
}
