// Package arch describes the Qwen3 decoder architecture that rerankd's
// rerankers use (Qwen3-Reranker, MemReranker): the Hugging Face config.json
// fields that size it, the names and shapes of its weight tensors, and
// seeded random weights for test and speed models.
//
// It is the shared vocabulary of the packages that build ONNX graphs
// (model/onnx), run the plain-Go reference pass (model/ref) and read real
// checkpoints (model/hf). Nothing here depends on ONNX Runtime.
//
// Tensor layout follows Hugging Face: a linear layer's weight is [out, in]
// and computes y = x·Wᵀ; norms are vectors of length hidden (or head_dim for
// q_norm/k_norm).
package arch
