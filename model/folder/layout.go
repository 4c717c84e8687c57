package folder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
)

// SupportedArchitectures are the config.json architectures rerankd
// converts, each with what it is and an example repo id (docs/user/models.md
// lists the same, README a summary):
//
//   - Qwen3ForCausalLM: a causal-LM reranker scored by the yes/no logits
//     of the official Qwen3-Reranker template (Qwen/Qwen3-Reranker-0.6B,
//     MemReranker).
//   - Qwen3ForSequenceClassification: the same backbone with a score.weight
//     head of 1 or 2 labels (tomaarsen/Qwen3-Reranker-0.6B-seq-cls, the
//     form vLLM recommends), see arch.ArchSeqCls.
//   - Qwen3Model: an embedding model (Qwen/Qwen3-Embedding-0.6B).
//   - Qwen2ForCausalLM: a Qwen2 decoder (q/k/v biases, no q/k norms, see
//     arch/qwen2.go) scored by two answer tokens of its own template
//     (mixedbread-ai/mxbai-rerank-base-v2: "1" and "0").
//   - Qwen2ForSequenceClassification: a Qwen2 backbone with a score.weight
//     head (michaelfeil/mxbai-rerank-base-v2-seq).
//   - XLMRobertaForSequenceClassification, BertForSequenceClassification:
//     encoder cross-encoders (BAAI/bge-reranker-v2-m3,
//     cross-encoder/ms-marco-MiniLM-L-6-v2), see arch/encoder.go.
//   - XLMRobertaModel, BertModel: encoder embedding models pooled as their
//     1_Pooling/config.json says (BAAI/bge-m3's dense vectors, CLS).
var SupportedArchitectures = append([]string{arch.ArchCausalLM, arch.ArchSeqCls, arch.ArchModel, arch.ArchQwen2CausalLM, arch.ArchQwen2SeqCls},
	arch.EncoderArchitectures()...)

// checkArchitecture refuses, by name, a checkpoint whose config.json
// names an architecture rerankd does not compute (an XLM-R or BERT
// cross-encoder, a Qwen2 embedding model, ...), before its other fields are judged:
// their errors would only say the sizes are missing. A config.json without
// architectures is left to arch.ParseConfig (model_type must be qwen3).
func checkArchitecture(src string) error {
	data, err := os.ReadFile(filepath.Join(src, hf.ConfigFile))
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var head struct {
		Architectures []string `json:"architectures"`
		ModelType     string   `json:"model_type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("config %s: %w", filepath.Join(src, hf.ConfigFile), err)
	}
	for _, a := range head.Architectures {
		supported := false
		for _, s := range SupportedArchitectures {
			supported = supported || a == s
		}
		if !supported {
			return fmt.Errorf("architecture %s (model_type %q) is not supported yet: rerankd converts %s",
				a, head.ModelType, strings.Join(SupportedArchitectures, ", "))
		}
	}
	return nil
}
