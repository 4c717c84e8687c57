// Package scoring is the scorer a server is built around, built once by
// the composition root (cmd/internal/app) and handed down to every route
// that scores: /rerank, the memory service's rerank stage (through
// Reranking), MCP. A Backend is the neural cross-encoder behind the
// scheduler's queue (Neural), the embedded lexical default (Lexical), or
// either with a calibration applied to every score (Calibrated).
//
// Score traces a backend's call (a "rerankd.score" span) the same way for
// every caller. The package never imports a front: the HTTP server
// (serve) calls it, never the other way round.
package scoring
