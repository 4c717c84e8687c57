package retrieval

import (
	"cmp"
	"maps"
	"slices"

	"github.com/rerankd/rerankd/retrieval/post"
)

func cloneScores(s map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(s)+1)
	maps.Copy(out, s)
	return out
}

// sortByScore orders by score descending, ties by ID ascending, as post does.
func sortByScore(cs []post.Candidate) {
	slices.SortStableFunc(cs, func(a, b post.Candidate) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
