package metrics

import "math"

// The functions here score one query. grades[i] is the qrels grade of the
// document at rank i+1 (0 when it is unjudged); numRel is the number of
// documents in the qrels with grade > 0, retrieved or not. Each mirrors the
// arithmetic of the trec_eval measure named in its comment, in the same
// order of floating-point operations, so results agree bit for bit up to
// the libm log2 used by NDCG.

// averagePrecision is trec_eval's map (m_map.c): the sum over relevant
// retrieved documents of precision at their rank, divided by numRel.
func averagePrecision(grades []int, numRel int) float64 {
	relSoFar := 0
	sum := 0.0
	for i, g := range grades {
		if g > 0 {
			relSoFar++
			sum += float64(relSoFar) / float64(i+1)
		}
	}
	if relSoFar == 0 {
		return 0
	}
	return sum / float64(numRel)
}

// reciprocalRank is trec_eval's recip_rank: 1/rank of the first relevant
// document, 0 when none is retrieved.
func reciprocalRank(grades []int) float64 {
	for i, g := range grades {
		if g > 0 {
			return 1.0 / float64(i+1)
		}
	}
	return 0
}

// relevantInTop counts documents with grade > 0 among the first k.
func relevantInTop(grades []int, k int) int {
	n := 0
	for _, g := range grades[:min(k, len(grades))] {
		if g > 0 {
			n++
		}
	}
	return n
}

// precisionAt is trec_eval's P_k: relevant in the top k over k, even when
// fewer than k documents were retrieved.
func precisionAt(grades []int, k int) float64 {
	return float64(relevantInTop(grades, k)) / float64(k)
}

// recallAt is trec_eval's recall_k: relevant in the top k over numRel.
func recallAt(grades []int, k, numRel int) float64 {
	if numRel == 0 {
		return 0
	}
	return float64(relevantInTop(grades, k)) / float64(numRel)
}

// ndcgAt is trec_eval's ndcg_cut_k (m_ndcg_cut.c): gain is the grade
// itself (grades <= 0 add nothing), the document at rank r is discounted by
// log2(r+1), and the ideal DCG ranks the qrels' positive grades (ideal,
// sorted descending) the same way, both cut at k. With no positive grade
// the ideal is 0 and so is the score.
func ndcgAt(grades, ideal []int, k int) float64 {
	dcg := dcgAt(grades, k)
	idcg := dcgAt(ideal, k)
	if idcg > 0 {
		return dcg / idcg
	}
	return dcg
}

func dcgAt(grades []int, k int) float64 {
	sum := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		if g > 0 {
			sum += float64(g) / math.Log2(float64(i+2))
		}
	}
	return sum
}
