package arch

import "fmt"

// Qwen2-architecture decoders (model_type "qwen2": Qwen2, Qwen2.5 and the
// rerankers built on them, such as mixedbread-ai/mxbai-rerank-base-v2 and
// michaelfeil/mxbai-rerank-base-v2-seq) compute what Qwen3 does with two
// differences, both in attention, after transformers' modeling_qwen2.py
// (from memory; no network here):
//
//   - q_proj, k_proj and v_proj carry biases (self_attn.{q,k,v}_proj.bias,
//     [out] each), added after the product; o_proj has none. Qwen2Config
//     has no attention_bias key: the biases are always there.
//   - there is no q_norm/k_norm: queries and keys are rotated as projected.
//
// Their vocabulary is 151,936 rows (the tokenizer has fewer ids), the head
// is tied in the small sizes (0.5B to 3B) and untied from 7B, and
// rope_theta comes from config.json (1e6 in Qwen2.5; a config without it
// is refused, as a Qwen3 one is). attention_bias, which Qwen2 does not
// read, is a warning. Every other field, and the config.json contract
// (doc.go), is Qwen3's.

// Model families: config.json model_type values rerankd computes.
const (
	FamilyQwen3 = "qwen3"
	FamilyQwen2 = "qwen2"
)

// Qwen2 architecture names written in config.json "architectures".
const (
	// ArchQwen2CausalLM is a Qwen2 decoder with an output head
	// (mixedbread-ai/mxbai-rerank-base-v2).
	ArchQwen2CausalLM = "Qwen2ForCausalLM"
)

// archFamily is the family each architecture name belongs to.
var archFamily = map[string]string{
	ArchCausalLM: FamilyQwen3, ArchSeqCls: FamilyQwen3, ArchModel: FamilyQwen3,
	ArchQwen2CausalLM: FamilyQwen2, ArchQwen2SeqCls: FamilyQwen2, "Qwen2Model": FamilyQwen2,
}

// Family returns the decoder family c describes: model_type, or, when
// config.json has none, the family of its architectures (Qwen3 when those
// say nothing either, as rerankd has always assumed).
func (c Config) Family() string {
	if c.ModelType != "" {
		return c.ModelType
	}
	for _, a := range c.Architectures {
		if f, ok := archFamily[a]; ok {
			return f
		}
	}
	return FamilyQwen3
}

// QKNorm reports whether attention RMS-normalises each query and key head
// (q_norm/k_norm): Qwen3 does, Qwen2 does not.
func (c Config) QKNorm() bool { return c.Family() != FamilyQwen2 }

// QKVBias reports whether q_proj, k_proj and v_proj have biases: Qwen2's do.
func (c Config) QKVBias() bool { return c.Family() == FamilyQwen2 }

// checkFamily reports a model_type rerankd does not compute, and
// architectures of the other family than model_type's.
func (c Config) checkFamily() []error {
	var errs []error
	if c.ModelType != "" && c.ModelType != FamilyQwen3 && c.ModelType != FamilyQwen2 {
		errs = append(errs, fmt.Errorf("model_type %q: only %s and %s are supported", c.ModelType, FamilyQwen3, FamilyQwen2))
		return errs
	}
	fam := c.Family()
	for _, a := range c.Architectures {
		if f, ok := archFamily[a]; ok && f != fam {
			errs = append(errs, fmt.Errorf("architectures %s is a %s model but model_type is %q", a, f, fam))
		}
	}
	return errs
}

// Qwen2Tiny is Tiny as a Qwen2 decoder: the Qwen2 vocabulary (151,936
// rows), q/k/v biases, no q/k norms, rope_theta 1e6 as in Qwen2.5.
func Qwen2Tiny() Config {
	c := Tiny()
	c.ModelType, c.Architectures = FamilyQwen2, []string{ArchQwen2CausalLM}
	c.VocabSize, c.MaxPositionEmbeddings = 151936, 32768
	return c
}

// MxbaiRerankBaseV2 returns the dimensions of mixedbread-ai/mxbai-rerank-
// base-v2, a Qwen2.5-0.5B decoder: 24 layers of 896, 14 query heads and 2
// kv heads of 64, MLP 4864, tied head. From memory of Qwen2.5-0.5B's
// config.json, not re-read here.
func MxbaiRerankBaseV2() Config {
	return Config{
		Architectures: []string{ArchQwen2CausalLM}, ModelType: FamilyQwen2,
		HiddenSize: 896, NumHiddenLayers: 24, NumAttentionHeads: 14, NumKeyValueHeads: 2,
		HeadDim: 64, IntermediateSize: 4864, RMSNormEps: 1e-6, RopeTheta: 1e6,
		VocabSize: 151936, TieWordEmbeddings: true, MaxPositionEmbeddings: 32768, TorchDtype: "bfloat16",
	}
}
