// Package scheduler is the load control between requests and a scoring
// engine: one bounded queue shared by every request, and a batcher that
// turns the waiting pairs into engine calls priced by the engine's own cost
// model (rows × longest row for an engine that pads, each shared prefix
// once plus every row's own tokens for the shared-prefix engine). Memory is
// bounded by its Config, never by the load; every admitted pair runs within
// a bounded number of batches or fails with its own request. It follows the
// shape of text-embeddings-inference's queue and batching task and of
// ollama's bounded scheduler.
//
// # Why
//
// A reranking request is a handful of (query, document) pairs. Scoring
// each request alone leaves the engine with small, ragged batches under
// load, and an unbounded queue turns overload into ever-growing latency
// and memory. So:
//
//   - Admission is all or nothing and never blocks. Submit puts every pair
//     of a request into the queue at once, or refuses it at once with
//     ErrOverloaded (the server answers 429 with Retry-After and the client backs off). A
//     request with more pairs than QueueSize could never fit and gets
//     ErrTooLarge instead, so that a client does not retry it. The queue is
//     one slice allocated at QueueSize: memory is bounded by the config,
//     not by the load.
//
//   - Pairs from all concurrent requests are pooled, and each engine call
//     carries pairs of similar length. A call's cost (counted against
//     BatchTokens) is what the engine computes: an engine that is a Coster
//     prices a batch itself (the shared-prefix engine: each shared prefix
//     once plus every row's own tokens); any other pads every row to the
//     longest and costs rows × longest row tokens, not the sum of the
//     lengths. The queue is kept sorted by length, then age; a batch is a
//     contiguous window of it, grown greedily by whichever neighbour
//     (next shorter or next longer) adds fewer padding tokens, within
//     MaxBatch rows, BatchTokens padded tokens and MaxPadRatio (padded ÷
//     real), and within the engine's own bound on a call where it has one
//     (batching.CallBounder: a cross-encoder bounds its attention scores,
//     which grow with rows × longest row²). A single pair longer than
//     BatchTokens runs alone.
//
//   - Anti-starvation: every batch contains the oldest waiting pair; the
//     window is grown around it. Grouping never chooses which length runs
//     next, only which neighbours join the oldest pair, so a long pair
//     among a stream of short ones is not passed over: once the pairs
//     queued before it have run, it is the oldest and rides the next batch.
//     Each batch takes the oldest pair, so a pair runs within k+1 batches,
//     k being the pairs queued before it and still waiting (fewer in
//     practice: batches carry many of them). Pure shortest-first or
//     fullest-batch-first policies have no such bound.
//
//   - Filling versus latency: an idle engine waits up to MaxWait, counted
//     from the arrival of the oldest waiting pair, for more pairs to
//     arrive, but never when the batch it would run is already full
//     (MaxBatch rows, or no room for one more row in BatchTokens) and never
//     while draining on Close. A busy engine lets pairs accumulate, so
//     under load batches form with no wait at all.
//
//   - Cancellation frees work, not just the caller. When a request's
//     context ends, Submit returns ctx.Err() at once and removes the
//     request's waiting pairs; a batch about to run also skips pairs whose
//     request has ended. Pairs already inside a running engine call finish
//     and their logits are discarded: engine calls are shared by several
//     requests and are not cancelled for one of them.
//
//   - Failures stay with their owners. An engine error fails exactly the
//     requests with a pair in that call (ErrEngine, wrapping the engine's
//     error); a NaN or infinite logit fails only its own request
//     (ErrBadScore) and is never returned as a score. A failed request's
//     other waiting pairs are dropped.
//
//   - Close drains: it refuses new requests, finishes queued and running
//     work, and returns once every worker has exited. If its context ends
//     first it fails the remaining requests with ErrClosed, cancels the
//     engine calls' context and returns without waiting for them.
//
// An engine that pads every row to the longest (the BERT / XLM-R encoders,
// the plain decoder graph) gets its request's pairs split by MaxPadRatio
// like any other pairs: on CPU a request of 15- and 65-word memories in
// one call measured slower than one call per pair (docs/perf/encoders.md).
//
// Workers (concurrent engine calls) defaults to 1 because ONNX Runtime
// already spreads one call over every CPU core; more workers only help
// engines that leave the machine idle during a call.
//
// Deadline-aware admission: the queue keeps a moving average of the
// engine's throughput (tokens per second); a request whose context has a
// deadline that the work queued ahead of it (plus its own) would overrun is
// refused at once with ErrOverloaded rather than queued to time out. Under
// overload clients therefore see fast 429s, not slow 504s.
//
// Tracing (trace.go): when a request's context holds a recording span, the
// scheduler adds a "queue" span (Submit to its first engine call) and an
// "inference" span per engine call that carried its pairs. An engine call
// serves several requests, so it is its own root span ("batch"), linked to
// each traced request it served; each inference span links back to it.
// Untraced requests cost one context lookup per pair.
package scheduler
