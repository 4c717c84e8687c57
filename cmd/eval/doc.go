// Command eval is rerankd's offline evaluation: a reranker or embedder in
// process (a model folder) or behind any served API, scored with
// trec_eval's metrics. Five subcommands, each one entry in program's table
// in main.go, dispatched by cmd/internal/cli as rerankd's are (usage text,
// help, exit statuses 0 ok, 1 failure, 2 usage error): metrics scores a TREC
// run against qrels; locomo runs a retrieval pipeline on LoCoMo
// conversations and scores it per category; compare puts runs side by side
// with paired significance tests; zh runs BM25 on the Chinese agent-memory
// set per query tag; calibrate fits score calibration and a threshold,
// judged leave one conversation out. The sections below give each one's
// output contract.
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
// # eval locomo
//
//	eval locomo --data DIR [--pipeline bm25|dense|hybrid[+rerank][+recency][+mmr]]
//	    [--model DIR | --rerank-url URL --rerank-api cohere|tei|jina]
//	    [--embed-model DIR | --embed-url URL] [--run FILE] [--json] [--cv GRID]
//
// runs each judged LoCoMo question through retrieval.Service (the code
// that answers POST /v1/search) over its own conversation's memories and
// scores the ranking against the evidence, overall and per category. The
// rerank stage scores in process (--model) or through a served rerank API
// (--rerank-url), the embedder likewise (--embed-model, --embed-url: an
// OpenAI embeddings API); package remote does the HTTP side (bounded
// concurrency, retries, per-request document caps, a score cache on disk)
// behind the interfaces the in-process stages have. With one request in
// flight a served rerankd gives the in-process run file byte for byte
// (TestServedMatchesInProcess).
//
// --run FILE writes the TREC run and FILE.json, the run's description
// (runInfo: build, pipeline, depths, reranker and embedder as folder
// hash or URL and model name, parameters, data hashes); the printed
// summary starts with it and --json carries it as "run". --rerank-depth
// defaults to /v1/search's rerank_depth (50); metrics whose cut-off is
// past what the run holds are marked ("*", "beyond_depth"). The table's
// columns are MAP, MRR, then the metrics by cut-off.
//
// # eval compare
//
//	eval compare [--data DIR | --qrels FILE] [--json] [--png FILE] RUN RUN...
//
// puts runs side by side (MAP, MRR, Recall@k, NDCG@10, overall and per
// LoCoMo category) and tests each against the first, per query: the
// paired randomization test (seeded) and the paired t-test of
// benchmarks/metrics. The judgments come from the first run's sidecar
// unless given; runs made on different data are refused.
//
// # eval zh, eval calibrate
//
// eval zh scores the Chinese agent-memory set (benchmarks/zh); eval
// calibrate fits score calibration and a threshold, judged leave one
// conversation out (package calibrate). Their flags are in -h.
//
// Flags and the environment are read here only; the packages below work
// on io.Readers and configuration structs.
package main
