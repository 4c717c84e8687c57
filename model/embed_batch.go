package model

import "slices"

// planBatches groups sequences of the given lengths for engine calls, as
// rerank.Scorer.run does: shortest first (rows of similar length waste little
// padding), at most maxBatch rows and rows × longest row <= budget tokens
// per call (padding counted, since the engine computes it). A sequence
// longer than the budget still runs, alone. With sameLength every call
// holds sequences of one length only, for engines whose output depends on
// the padding (see EmbeddingSession). It returns indexes into lens.
func planBatches(lens []int, maxBatch, budget int, sameLength bool) [][]int {
	order := make([]int, len(lens))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return lens[a] - lens[b] })
	var out [][]int
	for start := 0; start < len(order); {
		end := start
		for end < len(order) && end-start < maxBatch && (end-start+1)*lens[order[end]] <= budget &&
			(!sameLength || lens[order[end]] == lens[order[start]]) {
			end++
		}
		end = max(end, start+1)
		out = append(out, order[start:end:end])
		start = end
	}
	return out
}
