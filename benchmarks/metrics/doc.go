// Package metrics computes ranking-quality metrics (MAP, MRR, NDCG@k, P@k,
// Recall@k) over TREC-format qrels and runs, reproducing trec_eval 9.x.
//
// Why trec_eval conventions: published retrieval numbers (TREC, BEIR, MS
// MARCO) are trec_eval numbers, and the small choices below move scores in
// the third or fourth decimal. Matching them means our numbers can be put
// next to anyone else's, and checked against trec_eval itself. Each choice
// follows trec_eval's source, cited by file:
//
//   - Ranking (form_res_rels.c): a query's documents are sorted by score
//     descending, ties broken by docid descending in byte (strcmp) order. The
//     rank column of the run file is ignored. A docid retrieved twice for a
//     query is an error ("duplicate docs").
//   - Relevance: a qrels grade > 0 is relevant (trec_eval's default
//     relevance level 1). Unjudged documents are non-relevant. NDCG uses the
//     grade itself as the gain (m_ndcg_cut.c).
//   - Denominators: AP and Recall@k divide by the number of relevant
//     documents in the qrels, retrieved or not (m_map.c, m_recall.c); P@k
//     divides by k even when fewer than k documents were retrieved (m_P.c).
//   - NDCG@k (ndcg_cut): DCG = sum of grade/log2(rank+1) over the top k; the
//     ideal DCG ranks all of the query's positive qrels grades in descending
//     order, cut at k.
//   - Queries (trec_eval -c): every query in the qrels is evaluated and
//     counted; one missing from the run scores 0. Queries only in the run are
//     ignored. A qrels query with no relevant judgment scores 0 and is
//     counted, like trec_eval 9.x (see Evaluate).
//   - Means: per-query values summed in qid byte order, divided by the
//     number of queries, as trec_eval accumulates them.
//
// trec_eval prints means with "%6.4f"; values from this package agree with
// it to that precision.
//
// The package reads and writes only through io.Reader and io.Writer; flags,
// files and environment belong to cmd/eval.
package metrics
