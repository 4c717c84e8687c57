// Package client is the Go client of rerankd's HTTP API: rerank (the
// Cohere/Jina style and the text-embeddings-inference style), the memory
// API (add, list, get, delete, search), and health, readiness and info. It
// speaks the wire types of package api, the ones the server decodes, so a
// field the server learns is a field the client sends.
//
// Contracts:
//   - Every call takes the caller's context; cancelling it ends the call,
//     including any wait before a retry.
//   - 429 (queue full) and 503 (not ready, shutting down) are the answers
//     rerankd gives before doing any work, so every request is retried on
//     them, after the server's Retry-After (seconds or an HTTP date) or,
//     without one, a doubling back-off from Config.RetryBase. Retries stop
//     after Config.MaxRetries, or when the next wait would take the total
//     waited past Config.RetryBudget; the last answer is then returned as
//     an *Error. No other status and no transport error is retried: a
//     request that may have been carried out is never sent twice.
//   - A non-2xx answer is an *Error carrying the status, the server's
//     error_type and its message; errors.As gets it from any returned
//     error.
//   - A Client is safe for concurrent use.
package client
