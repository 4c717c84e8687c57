// Package model scores query–document pairs with a Qwen3-Reranker-style
// cross-encoder. It is the only package that uses cgo (ONNX Runtime through
// github.com/yalue/onnxruntime_go); everything else in rerankd talks to it
// through Scorer.
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
// # Prompt
//
// The official Qwen3-Reranker template (prompt.go): a fixed system prefix,
// "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {doc}", and a
// fixed suffix that ends in an empty think block. Truncation only ever
// shortens the document, and the query only down to a floor; the template
// and suffix are never cut (a cut suffix gives near-random scores).
package model
