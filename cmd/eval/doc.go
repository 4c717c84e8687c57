// Command eval is rerankd's offline evaluation: four subcommands, each one
// entry in program's table in main.go, dispatched by cmd/internal/cli as
// rerankd's are (usage text, help, exit statuses 0 ok, 1 failure, 2 usage
// error): metrics scores a TREC run against qrels; locomo runs a retrieval
// pipeline on LoCoMo conversations and scores it per category; zh runs BM25
// on the Chinese agent-memory set per query tag; calibrate fits score
// calibration and a threshold, judged leave one conversation out. The
// sections below give each one's output contract.
//
// # eval metrics
//
//	eval metrics --qrels FILE --run FILE [--json] [--per-query]
//
// scores a TREC run against TREC qrels with trec_eval's conventions (see
// package benchmarks/metrics: ties broken by docid descending, every qrels
// query counted as with trec_eval -c, run-only queries ignored).
//
// Output contract, relied on by other tooling:
//
//   - Default: a markdown table "| metric | value |" with one row per metric
//     in the fixed order MAP, MRR, NDCG@5, NDCG@10, P@5, Recall@1, Recall@5,
//     Recall@10, Recall@20, then queries. Values have 4 decimals, as
//     trec_eval prints them.
//   - --json: exactly one line holding one JSON object with exactly the keys
//     "MAP", "MRR", "NDCG@5", "NDCG@10", "P@5", "Recall@1", "Recall@5",
//     "Recall@10", "Recall@20", "queries", in that order; values at full
//     float64 precision.
//   - --per-query adds one entry per evaluated query, in qid byte order.
//     Markdown: a second table "| qid | MAP | ... |". JSON: the summary
//     object stays exactly as above on the first line, and each following
//     line is one object {"qid": ..., then the metric keys (no "queries")}
//     (JSON Lines). There is no "per_query" key.
//
// Exit status: 0 on success; 2 for usage errors (unknown subcommand or
// flag, missing --qrels or --run, stray arguments); 1 when an input cannot
// be read or parsed, with "eval metrics: FILE:LINE: reason" on stderr for a
// malformed line.
//
// Flags and the environment are read here only; the metrics package works
// on io.Readers.
package main
