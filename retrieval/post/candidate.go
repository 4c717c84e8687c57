package post

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// Score keys recorded in Candidate.Scores.
const (
	ScoreBM25 = "bm25"
	// ScoreLexical is the lexical stage's score when query analysis,
	// expansion or context changed it from BM25's (lexrank.Ranking).
	ScoreLexical = "lexical"
	ScoreVector  = "vector"
	ScoreFused   = "fused"
	ScoreRerank  = "rerank"
	ScoreRecency = "recency"
	ScoreMMR     = "mmr"
)

// Candidate is one memory moving through the post-retrieval stages.
type Candidate struct {
	// ID identifies the memory; it breaks score ties (ascending).
	ID string
	// Text is the memory's text, used by MMR when vectors are missing.
	Text string
	// Time is when the memory was written; the zero Time means unknown.
	Time time.Time
	// Source and Metadata are the memory's own, carried so that a result
	// is complete without reading the store again.
	Source   string
	Metadata memory.Metadata
	// Vector is the optional L2-normalised embedding, used by MMR.
	Vector []float32
	// Scores holds the per-stage scores reported in the response, keyed by
	// ScoreBM25, ScoreVector, ScoreFused, ScoreRerank, ScoreRecency and
	// ScoreMMR.
	Scores map[string]float64
	// Score is the current score that the next stage consumes.
	Score float64
}

// clone returns c with its own Scores map (the Vector is shared, read-only).
func (c Candidate) clone() Candidate {
	s := make(map[string]float64, len(c.Scores)+1)
	maps.Copy(s, c.Scores)
	c.Scores = s
	return c
}

// finite returns x, or 0 when x is NaN or infinite.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// compareCandidates orders by Score descending, then ID ascending.
func compareCandidates(a, b Candidate) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// sortCandidates sorts cs by Score descending, ties by ID ascending.
func sortCandidates(cs []Candidate) { slices.SortStableFunc(cs, compareCandidates) }
