// Package batching plans the engine calls of one request's sequences, for
// the reranker (rerank.Scorer) and the embedder (model.Embedder) alike:
// both sort by length and fill each call greedily under a row count and a
// token budget, and differ only in how a call's tokens are counted. It
// imports nothing that links cgo, so package rerank can use it.
//
// The server's scheduler plans differently on purpose (a window grown
// around the oldest waiting pair, across requests, with a padding ratio),
// and the shared-prefix engine packs rows inside one call (model/prefix.go);
// neither is a request-local, shortest-first plan.
package batching

import "slices"

// DefaultMaxPadRatio is the default bound on an engine call's computed
// tokens over its real tokens, for the scorer, the embedder and the
// server's scheduler alike (one value, so they plan the same calls). On
// CPU a padded token costs what a real one does and a call of one pair
// already keeps the matrix kernels busy, so batching wins only where it
// pads little; docs/perf/encoders.md has the measurements behind the value. A
// GPU, where fuller calls pay, wants a larger one (serve --max-pad-ratio).
const DefaultMaxPadRatio = 1.05

// Cost is the tokens one engine call over seqs computes. It must not keep
// or change seqs.
type Cost func(seqs [][]int) int

// Padded is rows × longest row: what an engine that pads every row to the
// longest computes.
func Padded(seqs [][]int) int {
	longest := 0
	for _, s := range seqs {
		longest = max(longest, len(s))
	}
	return len(seqs) * longest
}

// Plan groups seqs into engine calls and returns them as indexes into seqs:
// shortest first (rows of similar length waste little padding), each call
// at most maxBatch rows, cost(call) <= budget and, when maxPad > 0,
// cost(call) <= maxPad × its real tokens, so that on an engine that pads,
// rows of very different lengths run apart rather than pay for padding
// (the server's scheduler applies the same MaxPadRatio). A sequence over
// the budget still runs, alone. With sameLength every call holds sequences
// of one length only, for engines whose output depends on the padding. A
// nil cost is Padded. A non-nil fits is the engine's own bound on a call
// (CallBounder): a call grows only while fits holds, and a single sequence
// runs whatever fits says.
func Plan(seqs [][]int, maxBatch, budget int, maxPad float64, cost Cost, fits Fits, sameLength bool) [][]int {
	if cost == nil {
		cost = Padded
	}
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(seqs[a]) - len(seqs[b]) })
	var out [][]int
	var call [][]int
	for start := 0; start < len(order); {
		end, real := start, 0
		call = call[:0]
		for end < len(order) && end-start < maxBatch {
			next := seqs[order[end]]
			if sameLength && len(next) != len(seqs[order[start]]) {
				break
			}
			c := cost(append(call, next))
			if c > budget || maxPad > 0 && float64(c) > maxPad*float64(real+len(next)) {
				break
			}
			if fits != nil && len(call) > 0 && !fits(append(call, next)) {
				break
			}
			call = append(call, next)
			real += len(next)
			end++
		}
		end = max(end, start+1)
		out = append(out, order[start:end:end])
		start = end
	}
	return out
}
