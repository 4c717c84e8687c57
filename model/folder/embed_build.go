package folder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/tokenizer"
)

// ModelKind is what a model folder or checkpoint holds.
type ModelKind string

// Model kinds.
const (
	KindAuto      ModelKind = ""          // Convert: detect with DetectKind
	KindReranker  ModelKind = "reranker"  // Qwen3-Reranker: yes/no head
	KindEmbedding ModelKind = "embedding" // Qwen3-Embedding: last-token vectors
)

// ParseModelKind parses "auto" (or ""), "reranker" or "embedding".
func ParseModelKind(s string) (ModelKind, error) {
	switch ModelKind(s) {
	case "auto", KindAuto:
		return KindAuto, nil
	case KindReranker, KindEmbedding:
		return ModelKind(s), nil
	}
	return "", fmt.Errorf("model kind %q: want auto, reranker or embedding", s)
}

// DetectKind tells an embedding checkpoint from a reranker one and says
// why. Both are Qwen3 decoders with the same config.json fields, so it looks
// for what only embedding releases have: "Qwen3Model" in architectures
// (the headless class), or sentence-transformers files (modules.json,
// 1_Pooling/config.json). A BERT or XLM-R checkpoint is a reranker when
// it names a classification head, an embedding model when it is a bare
// encoder. Qwen3-Embedding releases whose config.json says
// Qwen3ForCausalLM and whose sentence-transformers files were not
// downloaded look like rerankers: pass KindEmbedding explicitly then.
func DetectKind(src string) (ModelKind, string, error) {
	if enc, err := IsEncoderCheckpoint(src); err != nil {
		return "", "", err
	} else if enc {
		return detectEncoderKind(src)
	}
	if err := checkArchitecture(src); err != nil {
		return "", "", err
	}
	cfg, err := arch.ReadConfig(filepath.Join(src, hf.ConfigFile))
	if err != nil {
		return "", "", err
	}
	if cfg.SeqCls() {
		return KindReranker, fmt.Sprintf("config.json architectures %v (a classification head)", cfg.Architectures), nil
	}
	if cfg.HasArchitecture(arch.ArchModel) {
		return KindEmbedding, fmt.Sprintf("config.json architectures %v", cfg.Architectures), nil
	}
	if ce, why := crossEncoder(src); ce {
		return KindReranker, why, nil
	}
	for _, f := range []string{STModulesFile, STPoolingFile} {
		if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(f))); err == nil {
			return KindEmbedding, f + " (sentence-transformers) present", nil
		}
	}
	return KindReranker, fmt.Sprintf("config.json architectures %v and no sentence-transformers files", cfg.Architectures), nil
}

// WriteTestEmbeddingModel writes a complete embedding model folder in the
// Hugging Face Qwen3-Embedding layout (model.onnx [+ data], config.json,
// tokenizer files whose post-processor appends <|endoftext|>, and the
// sentence-transformers modules.json, 1_Pooling/config.json and
// config_sentence_transformers.json) with seeded random weights of cfg.
// No lm_head is generated. Its vectors mean nothing: tests and speed only.
func WriteTestEmbeddingModel(out string, cfg arch.Config, seed uint64, o BuildOptions) error {
	w, err := arch.Random(cfg.Backbone(), seed)
	if err != nil {
		return err
	}
	if err := writeEmbeddingFolder(out, w, cfg, o.Tokenizer, "", o); err != nil {
		return err
	}
	return writeRandomMarker(out, seed)
}

// convertEmbedding writes a Qwen3-Embedding checkpoint (Qwen3Model names,
// no lm_head needed) as our embedding folder.
func convertEmbedding(src, out string, o BuildOptions) error {
	w, err := hf.LoadBackbone(src)
	if err != nil {
		return err
	}
	cfg, err := arch.ReadConfig(filepath.Join(src, hf.ConfigFile))
	if err != nil {
		return err
	}
	if err := checkEmbeddingST(src, cfg.HiddenSize); err != nil {
		return err
	}
	tokDir := o.Tokenizer
	if _, err := os.Stat(filepath.Join(src, tokenizer.FileName)); err == nil {
		tokDir = src
	}
	return writeEmbeddingFolder(out, w, cfg, tokDir, src, o)
}

// checkEmbeddingST refuses a Qwen3-Embedding checkpoint whose
// sentence-transformers files contradict the weights or are out of
// range: a word_embedding_dimension other than the hidden size, a
// max_seq_length that is not an integer in 1..MaxSeqLengthLimit.
func checkEmbeddingST(src string, hidden int) error {
	st, err := ReadSTSettings(src)
	if err != nil {
		return err
	}
	if st.PoolingDim > 0 && st.PoolingDim != hidden {
		return fmt.Errorf("%s: word_embedding_dimension %d disagrees with the weights, whose hidden size is %d", filepath.Join(src, filepath.FromSlash(STPoolingFile)), st.PoolingDim, hidden)
	}
	_, _, err = ReadMaxSeqLength(src)
	return err
}

// writeEmbeddingFolder builds and saves the embedding graph of w and the
// files around it. cfg is written as config.json; stSrc, when set, is a
// folder whose sentence-transformers files are copied instead of generated.
func writeEmbeddingFolder(out string, w *arch.Weights, cfg arch.Config, tokDir, stSrc string, o BuildOptions) error {
	if tokDir == "" {
		return errors.New("no tokenizer: the source has no tokenizer.json and none was given")
	}
	tokFile := tokDir
	if st, err := os.Stat(tokDir); err == nil && st.IsDir() {
		tokFile = filepath.Join(tokDir, tokenizer.FileName)
	}
	if err := os.MkdirAll(filepath.Join(out, filepath.Dir(filepath.FromSlash(STPoolingFile))), 0o755); err != nil {
		return err
	}
	// The tokenizer first: a source that is not a Qwen tokenizer fails
	// before the (large) model is written.
	if err := writeEmbeddingTokenizer(tokFile, filepath.Join(out, tokenizer.FileName)); err != nil {
		return err
	}
	opts := onnx.NewEmbeddingOptions()
	opts.Outputs = o.EmbeddingOutputs
	opts.Storage.ForceExternal = o.ForceExternal
	m, err := onnx.BuildEmbedding(w, opts)
	if err != nil {
		return err
	}
	if err := m.Save(out); err != nil {
		return err
	}
	if err := arch.WriteConfig(filepath.Join(out, hf.ConfigFile), cfg); err != nil {
		return err
	}
	src := filepath.Join(filepath.Dir(tokFile), tokenizer.ConfigFileName)
	if err := copyFile(src, filepath.Join(out, tokenizer.ConfigFileName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("copy %s: %w", tokenizer.ConfigFileName, err)
	}
	return writeSTFiles(out, stSrc, cfg.HiddenSize)
}

// writeEmbeddingTokenizer copies tokenizer.json, setting its
// post_processor to Qwen3-Embedding's "$A <|endoftext|>" template when it
// has no template (tokenizers of reranker or base releases), so the folder
// tokenizes as the published embedding model does with any HF tool. Only
// that member is replaced; the rest of the file is kept byte for byte.
func writeEmbeddingTokenizer(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	v, err := topLevelValues(data, "added_tokens", "post_processor")
	if err != nil {
		return fmt.Errorf("tokenizer %s: %w", src, err)
	}
	pp, found := v["post_processor"]
	if _, ok, err := parsePostProcessor(pp.raw); err != nil || ok {
		if err != nil {
			return fmt.Errorf("tokenizer %s: %w", src, err)
		}
		return copyFile(src, dst)
	}
	if !found {
		return fmt.Errorf("tokenizer %s has no post_processor member to replace", src)
	}
	type addedToken struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	}
	var added []addedToken
	if err := json.Unmarshal(v["added_tokens"].raw, &added); err != nil {
		return fmt.Errorf("tokenizer %s: added_tokens: %w", src, err)
	}
	eos := slices.IndexFunc(added, func(a addedToken) bool { return a.Content == EndOfText })
	if eos < 0 {
		return fmt.Errorf("tokenizer %s has no %s added token: not a Qwen tokenizer", src, EndOfText)
	}
	tmpl, err := embeddingTemplate(added[eos].ID)
	if err != nil {
		return err
	}
	out := make([]byte, 0, len(data)+len(tmpl))
	out = append(append(append(out, data[:pp.start]...), tmpl...), data[pp.end:]...)
	return writeFileAtomic(dst, out)
}

// embeddingTemplate is the post_processor of Qwen3-Embedding's
// tokenizer.json: "$A <|endoftext|>" (and "$A <|endoftext|> $B
// <|endoftext|>" for pairs).
func embeddingTemplate(eos int) ([]byte, error) {
	seq := func(id string, typeID int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typeID}}
	}
	special := func(typeID int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": EndOfText, "type_id": typeID}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<|endoftext|>" readable
	err := enc.Encode(map[string]any{
		"type":   "TemplateProcessing",
		"single": []any{seq("A", 0), special(0)},
		"pair":   []any{seq("A", 0), special(0), seq("B", 1), special(1)},
		"special_tokens": map[string]any{
			EndOfText: map[string]any{"id": EndOfText, "ids": []int{eos}, "tokens": []string{EndOfText}},
		},
	})
	return bytes.TrimSpace(buf.Bytes()), err
}

// writeSTFiles writes the sentence-transformers files of a Qwen3-Embedding
// folder, copying those stSrc has.
func writeSTFiles(out, stSrc string, hidden int) error {
	falseModes := []string{"cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens"}
	pooling := map[string]any{"word_embedding_dimension": hidden, "pooling_mode_lasttoken": true, "include_prompt": true}
	for _, m := range falseModes {
		pooling["pooling_mode_"+m] = false
	}
	generated := map[string]any{
		STModulesFile: []map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
			{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
		},
		STPoolingFile: pooling,
		STConfigFile: map[string]any{
			"prompts":             map[string]string{"query": QueryPrefix(DefaultEmbedInstruction), "document": ""},
			"default_prompt_name": nil,
			"similarity_fn_name":  "cosine",
		},
	}
	if stSrc != "" {
		err := copyFile(filepath.Join(stSrc, STBertConfigFile), filepath.Join(out, STBertConfigFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("copy %s: %w", STBertConfigFile, err)
		}
	}
	for _, name := range []string{STModulesFile, STPoolingFile, STConfigFile} {
		dst := filepath.Join(out, filepath.FromSlash(name))
		if stSrc != "" {
			err := copyFile(filepath.Join(stSrc, filepath.FromSlash(name)), dst)
			if err == nil {
				continue
			}
			if !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("copy %s: %w", name, err)
			}
		}
		data, err := json.MarshalIndent(generated[name], "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileAtomic(dst, append(data, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to dst atomically (atomicfile.WriteFile),
// so dst is never partial.
func writeFileAtomic(dst string, data []byte) error {
	return atomicfile.WriteFile(dst, data, 0o644)
}
