// Package onnx writes the ONNX graphs rerankd's model folders hold, built
// in Go from arch's weights: for a decoder reranker the plain graph, the
// shared-prefix graph and its attention form, each also in quantised
// variants; for an embedder its pooled-output graph; for a BERT / XLM-R
// encoder a classifier or bare-encoder graph (encoder.go). It also reads
// back what it wrote (graph inputs and outputs, metadata, external-data
// ranges) without ONNX Runtime. Every graph computes what model/ref
// computes, within float32 rounding (or the documented quantisation
// error), and uses only ops ONNX Runtime's CPU provider runs.
//
// We build graphs in Go, from arch.Weights, instead of exporting them from
// PyTorch: the serving machine has no Python, the graph then fits the exact
// contract the runtime expects (right-padded int64 input_ids and
// attention_mask in, one float32 logit per sequence out), and the ops are
// chosen so ORT fuses them (RMSNorm written with Pow becomes
// SimplifiedLayerNormalization; x*sigmoid(x) becomes QuickGelu). Where ORT
// has a CPU kernel for a whole subgraph but does not fuse it itself, the
// graph can name it (Options.Fusion, off by default: RotaryEmbedding,
// SkipSimplifiedLayerNormalization, FusedMatMul from ONNX Runtime's
// com.microsoft domain); Fusion 0, the default, writes standard ONNX ops
// only, except in the quantised variants that are built on a contrib kernel
// (QuantInt8Block32 and QuantInt8SmoothBlock32: MatMulNBits).
//
// The default head computes dot(final hidden state at the last real token,
// head[yes] - head[no]) instead of full-vocabulary logits: the reranker's
// score only needs sigmoid(yes - no), and a [batch, seq, 151669] tensor is
// what blows up memory in other servers. Full-vocabulary heads exist only
// to test the runtime against community exports.
//
// Weights stay in their Hugging Face [out, in] layout, multiplied with
// Gemm(transB=1), so initializers keep arch's names and shapes. Models whose
// weights exceed protobuf's 2 GiB limit (any real checkpoint) are saved with
// an external data file of page-aligned tensors that ORT can memory-map.
// The oracle for every graph written here is model/ref.
//
// BuildEncoder (encoder.go) writes BERT and XLM-R encoders: inputs
// input_ids, attention_mask and, with more than one token type,
// token_type_ids (int64 [batch, seq], right-padded); output logits [batch]
// for a classifier (one logit; two labels as label 1 minus label 0) or
// last_hidden_state [batch, seq, hidden] for a bare encoder. The
// architecture is recorded under MetaEncoderConfig, which ReadMeta reads
// without decoding the weights. EncoderOptions.Fusion may replace
// standard-op subgraphs of every layer with ONNX Runtime contrib kernels
// (SkipLayerNormalization for the post-LN residual add and norm, BiasGelu
// for the erf GELU or FastGelu for the tanh one, never FastGelu for erf;
// MultiHeadAttention with attention_mask as its key_padding_mask); each
// form computes the same function up to float32 rounding, keeps the
// weights' names and layout (EncoderWeights reads any form back), and is
// recorded under MetaEncoderFusion. A row's outputs stay independent of
// its padding and of the other rows in every form.
package onnx
