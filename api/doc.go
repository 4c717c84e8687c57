// Package api holds the JSON types of rerankd's HTTP API, shared by the
// server (serve/) and Go clients, so both sides always agree on the wire
// format. It has no behaviour beyond (un)marshalling.
//
// Two request styles are accepted on POST /rerank (and /v1/rerank,
// /v2/rerank): the Cohere/Jina style with "documents", answered with a
// RerankResponse, and the text-embeddings-inference style with "texts",
// answered with a bare list of TEIResult.
package api
