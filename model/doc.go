// Package model opens model folders and runs them: Open returns a
// rerank.Scorer over an engine (ONNX Runtime, or the plain-Go reference
// pass), OpenEmbedder an Embedder. It is the only package that imports
// ONNX Runtime's cgo binding (github.com/yalue/onnxruntime_go): the prompt,
// truncation and batching logic and the value types the server passes
// around are in package rerank, which builds without cgo; writing and
// converting folders is package model/folder. serve reaches a model only
// through the rerank.Engine that cmd/rerankd opens here
// (rerank.TestCgoBoundary holds this).
//
// # ONNX I/O contract
//
// Inputs: input_ids and attention_mask, int64 [batch, seq]. Rows are
// right-padded: real tokens first (mask 1), then padding (mask 0). If the
// model also has a position_ids input it is fed 0..seq-1 per row, which is
// correct for the real tokens under right padding. Any other input is
// refused at load.
//
// Output (ours, written by model/onnx and scripts/export_onnx.py): logits,
// float32 [batch] = logit("yes") - logit("no") at the last real token, so
// score = sigmoid(logit). Right padding plus the causal mask means a row's
// real tokens never see padding or other rows, so a pair's score does not
// depend on what it is batched with (the tests check this to 1e-6).
//
// Community exports are accepted too and detected from the output's shape:
//   - [batch, 2]: (no, yes) logits at the last real token -> yes - no;
//   - [batch, vocab]: full-vocabulary logits at the last real token;
//   - [batch, seq, vocab]: full-vocabulary logits at every position; the
//     last real position is sum(attention_mask) - 1.
//
// The yes/no ids are looked up in the model's tokenizer, never hard-coded.
// Full-vocabulary outputs cost batch×seq×vocab floats (600 MB for 8 pairs
// of 128 tokens); prefer our folded head.
//
// # Shared prefix
//
// Every pair of a request is prefix(system prompt + instruction + query) +
// document + suffix. When a model folder has onnx.SharedPrefixFile (written
// by default by folder.WriteTestModel and folder.Convert, sharing
// model.onnx.data), Open
// runs it instead of model.onnx through PrefixSession: each engine batch is
// split into groups of sequences sharing a prefix (planGroups, which also
// separates the requests the server's scheduler mixes into one batch), and
// each group is one ORT call computing the prefix once and every
// continuation once, packed without padding rows. Scores equal the plain
// graph's within 1e-5 (tested on tiny models with mixed lengths, several
// queries and instructions, context turns, batch sizes 1..N). One graph
// rather than a prefix graph feeding K/V to a continuation graph: two ORT
// sessions over the same weights keep two prepacked copies (measured 2x
// resident memory), and disabling prepacking to share a memory-mapped
// file slows every call. Options.NoSharedPrefix forces the plain path.
// The graph's last layer computes only what the score needs (keys and
// values of every token; the rest for each row's last token).
//
// Across requests, the same graph takes the K/V of earlier tokens as
// inputs and returns the prefix's, so PrefixSession keeps recent prefixes
// in a byte-bounded LRU (kvcache.go, Options.PrefixCacheMB, default 64 MiB,
// one cache per opened model). Attention is causal, so one entry serves the
// longest start any later prefix shares with it: the system prompt and
// instruction for a new query, everything but the last token for a repeated
// one. Scores stay within 1e-5 of the plain graph (tested, sequential and
// concurrent). Graphs written before past K/V existed still run, uncached.
//
// # Int8 weights
//
// folder.WriteTestModel and folder.Convert also write int8 variants of
// both graphs (onnx.QuantFile: model.int8.onnx, shared_prefix.int8.onnx;
// +0.45 GB in the shared data file for a 0.6B model), and Options.Quant
// selects them. The
// projections keep one int8 scale per output channel; activations are
// quantised per row at run time, so a document's score never depends on
// its batch (ORT's per-tensor DynamicQuantizeMatMul is not
// batch-independent). Its speed and score error are measured,
// not assumed: `rerankd-bench bench --quant int8` reports the error and ranking
// agreement against the float32 graph of the same weights; int8 is not the
// default (docs/perf/measurements.md has the figures and why).
//
// # Prompt
//
// Prompts are built and truncated by rerank.Scorer (package rerank's doc
// describes the template and the truncation rules); the engines here see
// token ids only.
//
// # Embeddings
//
// Embedder (embed*.go) runs Qwen3-Embedding-architecture models: the same
// Qwen3 decoder without a head, read at each input's last token and
// L2-normalised. It is rerankd's implementation of retrieval's Embedder
// interface (without one, vectors come from the client or there are
// none).
//
// Inputs follow the model card: a query is "Instruct: {task}\nQuery:{query}",
// a document its text, and the tokenizer's post-processor (a
// TemplateProcessing "$A <|endoftext|>" in Qwen3-Embedding's tokenizer.json;
// <|endoftext|> when the tokenizer declares none) adds the end token the
// vector is read at. Truncation cuts the text, never that token.
//
// Output contract: last_hidden_state, float32 [batch, seq, hidden], as
// Optimum and community exports expose it; our graph (onnx.BuildEmbedding)
// writes exactly that. Pooling and normalisation happen in Go, not in the
// graph: (1) one code path serves our files and community exports; (2) the
// last real token is found from the attention mask (the last position whose
// mask is 1), which is right for either padding side — a pooled output
// baked into someone else's graph may assume left padding and read a pad
// token under rerankd's right padding; (3) a Matryoshka size (EmbedConfig.Dim)
// needs re-normalising after truncation anyway. The cost is the final
// RMSNorm over all positions (elementwise, small next to the layers) and
// copying one row per input out of ORT's output. A model exposing only a
// pooled [batch, hidden] output (sentence_embedding or embeddings) is
// accepted but run in batches of equal-length inputs, where padding cannot
// matter. Anything else is refused, naming the outputs found.
//
// # Encoders
//
// EncoderSession (encoder.go) runs BERT / XLM-R graphs from
// onnx.BuildEncoder over already-encoded rows (Encoded: ids with the
// tokenizer's special tokens, optional type ids): Logits for a
// cross-encoder, Embed (pooled in Go from last_hidden_state, padding
// dropped) for a bi-encoder. Rows are right-padded to the call's longest
// and padding is masked out of every key, so a row's result does not
// depend on its batch (tested within 1e-5). EncoderReference has the same
// methods over model/ref. Rows longer than the model's positions are
// refused, not cut: truncation (LongestFirst over the pair) belongs to
// the tokenizer side, before this.
//
// Open and OpenEmbedder detect an encoder folder from its config.json
// (IsEncoderFolder). A classifier runs as an EncoderEngine (either
// engine; Options.Engine reference is EncoderReference) under
// rerank.NewPairScorer: pairs from the folder's EncoderTokenizer, cut to
// the asked-for length lowered to the model's positions (Info.MaxLength),
// token types beside the ids (rerank.Prompt.TypeIDs), cost rows ×
// longest row, a request's pairs split where padding would exceed the
// MaxPadRatio. A bare encoder runs as an Embedder: the
// text through EncoderTokenizer.Encode, pooled as its 1_Pooling says,
// L2-normalised, no instruction, a batch of texts split where padding
// would exceed EmbedConfig.MaxPadRatio. The text is only ever encoded by
// LoadOptions.EncoderTokenizer or the folder's own tokenizer.json
// (WordPiece or Unigram with a post-processor, through package
// tokenizer's EncodePair / EncodeSingle), never by the --tokenizer
// fallback (a Qwen tokenizer); a BPE tokenizer.json, another model type
// or a file without a post-processor is refused by name.
package model
