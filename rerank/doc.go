// Package rerank is the reranker without a runtime: the value types every
// layer passes around (Request, Score), the prompt template (Template) and
// how a request becomes token sequences (Scorer: prompt, truncation,
// batching by an Engine's cost, sigmoid), and Reranker, the one adapter
// from a scorer to the memory search pipeline (retrieval.Reranker) that
// the server and `eval locomo` share. It imports no cgo: the server
// uses it without linking ONNX Runtime, and an Engine that runs a model
// (package model's sessions, the reference pass, a test fake) is passed in
// by the caller. TestCgoBoundary holds that boundary.
//
// # Prompt
//
// Every pair is Template.Prefix + Instruction(instruction) + Query(query)
// + Document(doc) + Suffix, scored by logit(yes) - logit(no) at the last
// token. The default is the official Qwen3-Reranker template: a fixed
// system prefix, "<Instruct>: {instruction}\n<Query>: {query}\n<Document>:
// {doc}", and a fixed suffix that ends in an empty think block; a model
// folder may name another (model/folder.LoadTemplate). The query part is
// encoded once per request and each document alone, in segments whose
// ids equal those of encoding the whole string (tested for every known
// template). Truncation only ever shortens the document, and the query
// only down to a floor; the template and suffix are never cut (a cut
// suffix gives near-random scores).
//
// # Cross-encoders
//
// A scorer from NewPairScorer (BERT / XLM-R cross-encoders) has no
// template: each document is one pair its PairEncoder encodes with the
// model's own post-processor, special tokens counted in the maximum
// length and the pair cut LongestFirst; Truncated is exactly "the
// encoder cut text tokens". An instruction or conversation context is
// refused (ErrNoPrompt, naming the model), as are a per-document cut and
// a cut from the start (ErrPairTruncation). Score = sigmoid(logit) as for
// every model. Token types travel beside the ids (Prompt.TypeIDs, the
// types argument of an Engine call and of the server's scheduler), so a
// sequence's ids are its tokens and its cost depends on its length only.
package rerank
