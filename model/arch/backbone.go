package arch

import "slices"

// Architecture names written in config.json "architectures".
const (
	// ArchCausalLM is a decoder with an output head (rerankers, and the
	// config.json of some Qwen3-Embedding releases).
	ArchCausalLM = "Qwen3ForCausalLM"
	// ArchModel is the bare decoder without a head, the class embedding
	// models are run as (AutoModel) and sometimes saved as.
	ArchModel = "Qwen3Model"
)

// Backbone returns c as the config of a model without an output head, such
// as an embedding model (Qwen3Model): its Shapes then list no
// lm_head.weight, so weights without one pass Check whatever
// tie_word_embeddings said. TieWordEmbeddings is set to express "no
// separate head tensor"; keep the original config for writing config.json.
func (c Config) Backbone() Config {
	c.TieWordEmbeddings = true
	c.backbone = true // no score.weight either, for a classification checkpoint
	return c
}

// HasArchitecture reports whether config.json lists name in architectures.
func (c Config) HasArchitecture(name string) bool {
	return slices.Contains(c.Architectures, name)
}
