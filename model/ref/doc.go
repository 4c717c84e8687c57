// Package ref is the plain-Go forward pass of every architecture rerankd
// runs, the oracle its ONNX graphs are checked against: the Qwen3 and
// Qwen2 decoders (a reranker's yes-minus-no logit, an embedder's pooled
// hidden state) and the BERT-family encoders (classifier logits, pooled
// embeddings). Slow, obvious loops with float64 accumulation, no padding,
// no batching, following transformers' modeling files step by step: keep
// it simple rather than fast.
//
// It exists as the oracle: the ONNX graphs of model/onnx (and whatever ORT
// makes of them) are checked against it, and `--engine reference` uses it to
// score without ONNX Runtime when debugging a suspicious score. Its code
// follows Hugging Face's Qwen3 (and Qwen2) modeling file step by step, so keep it
// simple rather than fast.
//
// encoder.go is the same kind of pass for BERT-family encoders (BERT,
// XLM-RoBERTa; transformers' modeling_bert.py and modeling_xlm_roberta.py):
// classifier logits from the heads' own tensors, hidden states for
// pooled embeddings. It is tested against a one-layer model derived in
// closed form (encoder_test.go), not against itself.
package ref
