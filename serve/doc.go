// Package serve is rerankd's HTTP and MCP front: it decodes requests,
// checks API keys and their namespace scopes, applies the Host/Origin
// policy, calls the scorer (package scoring) and the memory service
// (package retrieval) it is handed, and maps their errors to HTTP statuses
// in one table (statusOf, with retrievalKinds for the memory service's
// kinds). It validates only what is its own (the HTTP shape: JSON, media
// type, path encoding, the rerank routes' fields); the memory API's
// parameters, their defaults and their checks are the service's
// (retrieval.SearchRequestOf, ItemsOf, PatchOf, ListPage), and serve
// imports no retrieval sub-package. Routes: the rerank API
// (Cohere/Jina and text-embeddings-inference styles), the memory API, the
// embedding API (OpenAI's /v1/embeddings and /v1/models, TEI's /embed,
// /tokenize), health, info, metrics and OpenAPI.
//
// Embeddings (embed.go, tokenize.go): WithEmbedder serves the embedding
// model through the queue the memory search embeds with (retrieval/embed's
// Queue, called with retrieval.EmbedOptions), so a text gets the vector the memory search stores, and a full
// queue answers 429. Every response names the model that answered by its
// first served name (Config.RerankerNames, EmbedModel.Names); a request
// naming another model is answered anyway unless Config.StrictModelName.
// Errors on OpenAI's routes are written in OpenAI's shape (writeError).
//
// Request flow: decode + validate (handlers.go) -> scoring.Score over the
// Backend that cmd/internal/app built and handed to New; the memory
// service reranks with the same Backend (scoring.Reranking), handed to it
// by the same composition root, so no stage calls back up into serve. The
// neural backend tokenizes in the request's goroutine, then hands the token
// sequences to the scheduler, which pools pairs of all concurrent requests
// into length-grouped batches under a token budget and refuses work (429)
// when its bounded queue is full. The lexical backend scores in place.
//
// Client disconnects: fasthttp (under fiber) does not signal a client that
// went away, so on Linux the handler peeks at the socket while it waits
// (disconnect_linux.go) and cancels the request's context when the client
// has closed it; the scheduler then drops the request's pairs that have not
// started. Elsewhere an abandoned request ends at its timeout.
//
// MCP (mcp.go): NewMCP builds a Model Context Protocol server whose tools
// call the same functions as the HTTP handlers (addMemories, search,
// listMemories, deleteMemory, rerank) after the same decoding, so a tool
// answers what its route answers: the response body as structuredContent
// (and as JSON text), or the route's error message as a tool error
// (isError), never a JSON-RPC error. The SDK does not validate arguments
// against the schemas it lists, so the messages stay the API's. Over HTTP
// (WithMCP, POST /mcp) the API-key middleware runs first and a tool's
// namespace scope is the key's; over stdio every namespace is allowed.
// fiber's net/http adaptor buffers a handler's whole answer (Flush does
// nothing), so /mcp is stateless with JSON answers: no session, no
// server-to-client stream, any replica answers any request.
//
// Tracing (trace.go): with Config.Tracer set, every API request (not the
// probes, /metrics or the static pages) gets a server span, a child of an
// incoming W3C traceparent, placed in the user context that handlers pass
// down; stages below start children from it (package tracing/span). Spans
// carry the method, route, status and error kind, never a raw path (it may
// hold memory ids), a header value or the body.
package serve
