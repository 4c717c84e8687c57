package hf

import (
	"path/filepath"

	"github.com/rerankd/rerankd/model/arch"
)

// LoadBackbone reads a checkpoint as a model without an output head, as
// embedding models (Qwen3-Embedding, saved as Qwen3Model with bare
// "layers.N..." names) are run: no lm_head.weight is required even when
// config.json says tie_word_embeddings is false, and one present is not
// read. The returned Config is the backbone one (arch.Config.Backbone);
// read config.json again for the original.
func LoadBackbone(dir string) (*arch.Weights, error) {
	cfg, err := arch.ReadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	return loadWeights(dir, cfg.Backbone())
}
