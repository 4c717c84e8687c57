// Package arch describes the architectures rerankd runs: the Qwen3
// decoder of its rerankers and embedders (Qwen3-Reranker, MemReranker,
// Qwen3-Embedding) and its Qwen2 sibling (mxbai-rerank-v2; q/k/v biases,
// no q/k norms: qwen2.go), and the BERT / XLM-R encoders (encoder.go):
// which config.json fields size them and which are refused, the names and
// shapes of their weight tensors, and seeded random weights for test and
// speed models. It is the vocabulary model/onnx, model/ref and model/hf
// share, and depends on none of them nor on ONNX Runtime.
//
// It is the shared vocabulary of the packages that build ONNX graphs
// (model/onnx), run the plain-Go reference pass (model/ref) and read real
// checkpoints (model/hf). Nothing here depends on ONNX Runtime.
//
// Tensor layout follows Hugging Face: a linear layer's weight is [out, in]
// and computes y = x·Wᵀ; norms are vectors of length hidden (or head_dim for
// q_norm/k_norm).
//
// # config.json contract
//
// rerankd computes exactly one function: transformers' Qwen3 decoder with
// plain RoPE over all of head_dim, projections without biases, a SiLU
// gated MLP and full causal attention in every layer, in inference mode;
// or, for model_type qwen2 (Family), transformers' Qwen2 decoder, the same
// with biases on q/k/v and without q_norm/k_norm (attention_bias, which
// Qwen2 does not read, is then a warning, not judged). model_type must be
// one of the two and agree with the architectures' family.
// A checkpoint whose config.json asks for anything else must not be
// converted, or its scores would silently differ from the model's, so
// ParseConfig (behind ReadConfig) puts every key in one of four classes:
//
//   - Honoured: the Config fields (model_type, architectures, hidden_size,
//     num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
//     intermediate_size, rms_norm_eps, rope_theta, vocab_size,
//     tie_word_embeddings, max_position_embeddings, torch_dtype; for
//     Qwen3ForSequenceClassification also pad_token_id, id2label,
//     label2id, sentence_transformers.activation_fn and
//     sbert_ce_default_activation_function, see seqcls.go). head_dim
//     and num_key_value_heads default as in transformers; rope_theta may
//     come from transformers 5's rope_parameters.
//   - Refused unless the value means the default (an error naming the key
//     and its value; transformers' default applies when a key is absent):
//     rope_scaling (null, or rope_type/type "default" and nothing else;
//     linear, dynamic, yarn, longrope, llama3 are refused), rope_parameters
//     (rope_type "default", optionally rope_theta), partial_rotary_factor
//     (1), attention_bias (false or null), hidden_act ("silu" or its alias
//     "swish"), use_sliding_window (false or null; true only where no window
//     binds: sliding_window null, max_window_layers >= num_hidden_layers, or
//     sliding_window >= max_position_embeddings; transformers' defaults when
//     absent are 4096, 28 and 32768), layer_types (num_hidden_layers entries,
//     all "full_attention"), quantization_config (null). sliding_window and
//     max_window_layers are read only for that rule: set with
//     use_sliding_window false, as Qwen3-Reranker ships them, they load.
//   - Ignored as harmless whatever the value (HarmlessKeys, each with its
//     reason): attention_dropout (dropout is off at inference),
//     bos_token_id, eos_token_id, use_cache, problem_type (a training
//     loss), initializer_range, dtype, transformers_version, _name_or_path.
//   - Anything else is unknown: it loads, and a warning names the key
//     (ReadConfigWarnings; rerankd convert prints them on stderr), since
//     rerankd cannot tell whether it changes the model. Extend the classes
//     above, never guess, when one turns out to matter.
//
// Problems are reported together (errors.Join), as Validate does. Configs
// written by WriteConfig hold only honoured keys and load without warnings.
// Opening an ONNX folder reads its config.json with ReadConfigInfo, sizes
// only: there the graph fixes the computation, and an exporter that
// implemented, say, YaRN is not wrong to say so.
//
// # Encoders
//
// encoder*.go describe BERT-family encoders (BertForSequenceClassification,
// XLMRobertaForSequenceClassification, BertModel, XLMRobertaModel) with
// their own types, EncoderConfig and EncoderWeights, under the same
// contract: ParseEncoderConfig uses, judges, ignores as harmless or warns
// about every key, and refuses what changes the computation and is not
// built (position_embedding_type other than absolute, a hidden_act outside
// HiddenActs, auto_map, i.e. trust_remote_code, jina-reranker-v2 by name,
// is_decoder, cross-attention, quantization_config). Keys transformers
// defaults are given BertConfig's / XLMRobertaConfig's defaults; sizes
// must be present. XLM-R numbers positions from pad_token_id + 1, so it
// takes MaxTokens() = max_position_embeddings - pad_token_id - 1 tokens.
// Tensor names are the bare encoder's; checkpoints of the classifiers
// prefix them "roberta."/"bert." (model/hf reads either). Pooling
// (pooling.go) is sentence-transformers': cls, mean or max over real
// tokens, then optionally L2.
package arch
