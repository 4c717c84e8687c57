// Package remote scores and embeds through served HTTP APIs, behind the
// interfaces the in-process stages have, so that a pipeline cannot tell a
// server from a model folder: Reranker.Score is a rerank.Reranker's Score
// function (Cohere, Jina and text-embeddings-inference rerank APIs), and
// Embedder is a retrieval.Embedder (OpenAI's POST /v1/embeddings).
//
// Every request goes through one Transport: at most Concurrency requests
// in flight, each attempt bounded by Timeout, and failed attempts retried
// up to Retries times — 429 (and 503) after the server's Retry-After
// (seconds or an HTTP date, up to MaxRetryAfter; exponential backoff when
// absent), 5xx, connection errors and
// timed-out attempts after an exponential backoff. Other 4xx answers are
// errors at once, naming the status and the server's message.
//
// A rerank request carries at most MaxDocs documents (TEI's default
// client batch is 32): longer lists are split and the scores reassembled
// in order. A server that refuses a request for its size (413, or a 400 /
// 422 naming a limit) lowers the cap for the rest of the run, to the
// number its message names or to half, and the request is split again:
// no document is lost and none is scored twice.
//
// With a Cache, every score and vector is kept on disk under a key of
// the server's identity (API and endpoint URL), the model name sent, and
// the exact query and document (and the request options that change a
// score); an interrupted run resumes where it stopped, and a repeated run
// sends no request. The identity does not see a different model put
// behind the same URL under the same name: use another cache file then.
package remote
