package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/tokenizer"
)

// Encoder folders (BERT, XLM-R; arch.EncoderConfig). A converted one holds
// model.onnx, model.onnx.data (the weights of every graph, each tensor
// once: onnx.EncoderStorage), model.int8.onnx with BuildOptions.Quants,
// config.json (the encoder's), the source's tokenizer files
// (EncoderTokenizerFiles, those present), and for an embedding model its
// sentence-transformers modules.json and 1_Pooling/config.json, from which
// ReadEncoderPooling reads the pooling. A folder an older rerankd wrote
// with the weights inside its graphs is rewritten by Convert
// (relayoutEncoder). There is no prompt template and no shared-prefix
// graph: attention is bidirectional, nothing is shared.

// EncoderTokenizerFiles are the tokenizer files copied from an encoder
// checkpoint when present: Hugging Face's tokenizer.json (Unigram for
// XLM-R, WordPiece for BERT) and the files that configure it.
var EncoderTokenizerFiles = []string{
	"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
	"sentencepiece.bpe.model", "vocab.txt", STBertConfigFile,
}

// STNormalizeType is the sentence-transformers module that L2-normalises
// the pooled vector (2_Normalize).
const STNormalizeType = "sentence_transformers.models.Normalize"

// IsEncoderCheckpoint reports whether src's config.json describes a BERT or
// XLM-R model (model_type or architectures), which the encoder path
// converts.
func IsEncoderCheckpoint(src string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(src, hf.ConfigFile))
	if err != nil {
		return false, fmt.Errorf("config: %w", err)
	}
	enc, err := arch.EncoderModelType(data)
	if err != nil {
		return false, fmt.Errorf("config %s: %w", filepath.Join(src, hf.ConfigFile), err)
	}
	return enc, nil
}

// detectEncoderKind: a classifier architecture is a reranker, a bare
// encoder an embedding model.
func detectEncoderKind(src string) (ModelKind, string, error) {
	cfg, _, err := arch.ReadEncoderConfig(filepath.Join(src, hf.ConfigFile))
	if err != nil {
		return "", "", err
	}
	if cfg.Classifier() {
		return KindReranker, fmt.Sprintf("config.json architectures %v (a classification head)", cfg.Architectures), nil
	}
	return KindEmbedding, fmt.Sprintf("config.json architectures %v (a bare encoder)", cfg.Architectures), nil
}

// convertEncoder is Convert for an encoder checkpoint, or for a folder
// an earlier Convert wrote (relayoutEncoder).
func convertEncoder(src, out string, o BuildOptions) error {
	if _, err := os.Stat(filepath.Join(src, onnx.ModelFile)); err == nil {
		return relayoutEncoder(src, out)
	}
	w, warns, err := hf.LoadEncoder(src)
	for _, msg := range warns {
		o.warn(msg)
	}
	if err != nil {
		return err
	}
	c := w.Config
	switch {
	case o.Kind == KindReranker && !c.Classifier():
		return fmt.Errorf("--kind reranker: %v has no classification head (an embedding model: use --kind embedding)", c.Architectures)
	case o.Kind == KindEmbedding && c.Classifier():
		return fmt.Errorf("--kind embedding: %v is a cross-encoder (a reranker: use --kind reranker)", c.Architectures)
	}
	var pool arch.Pooling
	if !c.Classifier() {
		if pool, err = checkEncoderST(src, c, o); err != nil {
			return err
		}
	}
	if err := checkEncoderTokenizer(src, c); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	opts := onnx.NewEncoderOptions() // external data whatever o.ForceExternal says
	opts.Fusion = o.EncoderFusion
	m, err := onnx.BuildEncoder(w, opts)
	if err != nil {
		return err
	}
	extra := map[string]*onnx.Model{}
	for _, q := range o.Quants {
		if q == onnx.QuantNone || !c.Classifier() || q == onnx.QuantInt8Mixed || q == onnx.QuantInt8Smooth || q == onnx.QuantInt8SmoothBlock32 {
			continue // embedding models: float32 only, as the decoder embedders; mixed and smooth name decoder tensors
		}
		qo := opts
		qo.Quant = q
		if extra[onnx.QuantFile(onnx.ModelFile, q)], err = onnx.BuildEncoder(w, qo); err != nil {
			return fmt.Errorf("%v variant: %w", q, err)
		}
	}
	if err := m.SaveWith(out, extra); err != nil {
		return err
	}
	if err := arch.WriteEncoderConfig(filepath.Join(out, hf.ConfigFile), c); err != nil {
		return err
	}
	for _, name := range EncoderTokenizerFiles {
		if err := copyFile(filepath.Join(src, name), filepath.Join(out, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("copy %s: %w", name, err)
		}
	}
	if c.Classifier() {
		return nil
	}
	return writeEncoderST(out, c.HiddenSize, pool)
}

// relayoutEncoder rewrites the graphs of a converted encoder folder (src:
// model.onnx and its variants, model.<quant>.onnx) into out with their
// weights in one shared data file (onnx.EncoderStorage), and copies the
// folder's other files. This is how a folder written before encoder
// graphs kept external data (weights inside model.onnx, which ONNX Runtime
// copies onto the heap) is brought to the mapped layout; out may be src,
// whose graphs are then replaced file by file, the data file first, so
// every graph on disk stays loadable throughout.
func relayoutEncoder(src, out string) error {
	graphs, err := filepath.Glob(filepath.Join(src, "model*.onnx"))
	if err != nil {
		return err
	}
	var main *onnx.Model
	extra := map[string]*onnx.Model{}
	for _, path := range graphs {
		if _, err := onnx.ReadEncoderConfig(path); err != nil {
			return fmt.Errorf("%s: not an encoder graph written by rerankd convert: %w", path, err)
		}
		m, err := onnx.LoadGraph(path)
		if err != nil {
			return err
		}
		m.Storage = onnx.EncoderStorage()
		if filepath.Base(path) == onnx.ModelFile {
			main = m
		} else {
			extra[filepath.Base(path)] = m
		}
	}
	if main == nil {
		return fmt.Errorf("%s: no %s", src, onnx.ModelFile)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := main.SaveWith(out, extra); err != nil {
		return err
	}
	// The folder's other files: config, tokenizer, sentence-transformers
	// modules (copyFile skips a file onto itself).
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(out, rel), 0o755)
		}
		name := d.Name()
		if filepath.Dir(rel) == "." && (name == onnx.DataFile || strings.HasPrefix(name, "model") && strings.HasSuffix(name, ".onnx")) {
			return nil
		}
		return copyFile(path, filepath.Join(out, rel))
	})
}

// ReadEncoderPooling reads an encoder embedding model's pooling from its
// sentence-transformers files: the Pooling module's config (the path
// modules.json gives it, else 1_Pooling) and whether a Normalize module
// follows. One mode of cls, mean or max is computed; anything else
// (several modes concatenated, weighted mean, mean_sqrt_len, last token)
// is refused by name, as is a folder without 1_Pooling/config.json: the
// pooling is the model's, never guessed.
func ReadEncoderPooling(dir string) (arch.Pooling, error) {
	p, _, err := readEncoderPooling(dir)
	return p, err
}

// ReadEncoderPoolingDim is ReadEncoderPooling that also returns the
// Pooling config's word_embedding_dimension (0 when it states none); a
// value that is not a positive integer is an error naming the field.
func ReadEncoderPoolingDim(dir string) (arch.Pooling, int, error) {
	return readEncoderPooling(dir)
}

func readEncoderPooling(dir string) (arch.Pooling, int, error) {
	poolPath, normalize := STPoolingFile, false
	data, err := os.ReadFile(filepath.Join(dir, STModulesFile))
	switch {
	case err == nil:
		var mods []struct {
			Path string `json:"path"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &mods); err != nil {
			return arch.Pooling{}, 0, fmt.Errorf("%s: %w", STModulesFile, err)
		}
		for _, m := range mods {
			switch {
			case strings.HasSuffix(m.Type, ".Pooling"):
				if !filepath.IsLocal(filepath.FromSlash(m.Path)) {
					return arch.Pooling{}, 0, fmt.Errorf("%s: Pooling module path %q is outside the model folder", STModulesFile, m.Path)
				}
				poolPath = m.Path + "/config.json"
			case m.Type == STNormalizeType:
				normalize = true
			case strings.HasSuffix(m.Type, ".Transformer"):
			default:
				// A Dense (or any other) module changes the embedding;
				// serving without it would give other vectors than the
				// model's, silently.
				return arch.Pooling{}, 0, fmt.Errorf("%s: module %q (%s) is not supported: rerankd computes Transformer, Pooling and Normalize modules only, "+
					"so its embeddings would not be the model's", STModulesFile, m.Path, m.Type)
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return arch.Pooling{}, 0, err
	}
	data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(poolPath)))
	if err != nil {
		return arch.Pooling{}, 0, fmt.Errorf("embedding model pooling: %w (an encoder embedding model needs sentence-transformers' %s to say how it pools)", err, poolPath)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		return arch.Pooling{}, 0, fmt.Errorf("%s: %w", poolPath, err)
	}
	var modes []string
	for k, v := range c {
		if on, ok := v.(bool); ok && on && strings.HasPrefix(k, "pooling_mode_") {
			modes = append(modes, strings.TrimPrefix(k, "pooling_mode_"))
		}
	}
	slices.Sort(modes)
	byName := map[string]arch.PoolMode{"cls_token": arch.PoolCLS, "mean_tokens": arch.PoolMean, "max_tokens": arch.PoolMax}
	if len(modes) != 1 || byName[modes[0]] == "" {
		return arch.Pooling{}, 0, fmt.Errorf("%s: pooling modes %v: rerankd pools encoders with exactly one of cls_token, mean_tokens, max_tokens", poolPath, modes)
	}
	dim := 0
	if v, ok := c["word_embedding_dimension"]; ok && v != nil {
		d, isNum := v.(float64)
		if !isNum || d < 1 || d > 1<<20 || d != math.Trunc(d) {
			return arch.Pooling{}, 0, fmt.Errorf("%s: word_embedding_dimension %v: want a positive integer", poolPath, v)
		}
		dim = int(d)
	}
	return arch.Pooling{Mode: byName[modes[0]], Normalize: normalize}, dim, nil
}

// writeEncoderST writes modules.json, 1_Pooling/config.json and (when p
// normalises) 2_Normalize as sentence-transformers saves them.
func writeEncoderST(out string, hidden int, p arch.Pooling) error {
	pooling := map[string]any{"word_embedding_dimension": hidden, "include_prompt": true}
	for _, m := range []string{"cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken"} {
		pooling["pooling_mode_"+m] = false
	}
	pooling["pooling_mode_"+map[arch.PoolMode]string{arch.PoolCLS: "cls_token", arch.PoolMean: "mean_tokens", arch.PoolMax: "max_tokens"}[p.Mode]] = true
	modules := []map[string]any{
		{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
		{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
	}
	if p.Normalize {
		modules = append(modules, map[string]any{"idx": 2, "name": "2", "path": "2_Normalize", "type": STNormalizeType})
		if err := os.MkdirAll(filepath.Join(out, "2_Normalize"), 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "1_Pooling"), 0o755); err != nil {
		return err
	}
	for name, v := range map[string]any{STModulesFile: modules, STPoolingFile: pooling} {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(out, filepath.FromSlash(name)), append(data, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// WriteTestEncoderCheckpoint writes a Hugging Face checkpoint folder of
// cfg with seeded random weights, as the real repositories lay it out:
// config.json and model.safetensors in dtype (F32, BF16, F16), and for a
// bare encoder the sentence-transformers modules.json and
// 1_Pooling/config.json (pooling p). No tokenizer: pass one to the
// scoring path when it exists. Tests and speed only: random weights
// score nothing.
func WriteTestEncoderCheckpoint(out string, cfg arch.EncoderConfig, seed uint64, dtype string, p arch.Pooling) error {
	w, err := arch.RandomEncoder(cfg, seed)
	if err != nil {
		return err
	}
	if err := hf.WriteEncoderCheckpoint(out, w, dtype); err != nil {
		return err
	}
	if err := writeRandomMarker(out, seed); err != nil {
		return err
	}
	if cfg.Classifier() {
		return nil
	}
	if err := p.Validate(); err != nil {
		return err
	}
	return writeEncoderST(out, cfg.HiddenSize, p)
}

// checkEncoderST reads an encoder embedding checkpoint's
// sentence-transformers files and refuses, naming the file and the field,
// what the weights contradict: a Pooling word_embedding_dimension other
// than the hidden size, a max_seq_length that is not an integer in
// 1..MaxSeqLengthLimit. A max_seq_length beyond the model's positions is
// held to them (ReadInputLimit), with a warning.
func checkEncoderST(src string, c arch.EncoderConfig, o BuildOptions) (arch.Pooling, error) {
	pool, dim, err := ReadEncoderPoolingDim(src)
	if err != nil {
		return arch.Pooling{}, err
	}
	if dim > 0 && dim != c.HiddenSize {
		return arch.Pooling{}, fmt.Errorf("%s: word_embedding_dimension %d disagrees with the weights, whose hidden size is %d", filepath.Join(src, filepath.FromSlash(STPoolingFile)), dim, c.HiddenSize)
	}
	lim, err := ReadInputLimit(src, c.MaxPositionEmbeddings, c.MaxTokens())
	if err != nil {
		return arch.Pooling{}, err
	}
	if lim.Capped {
		o.warn(fmt.Sprintf("%s: %s %d is beyond the model's %d positions: inputs are cut at %d", src, lim.Source, lim.Stated, lim.Tokens, lim.Tokens))
	}
	return pool, nil
}

// checkEncoderTokenizer refuses, at convert, a tokenizer.json the folder
// could not be served with: one that does not load (not JSON, not a
// tokenizer), gives ids past the model's vocab_size, or type ids past its
// token types. A folder without one is left to serve's own refusal.
func checkEncoderTokenizer(src string, c arch.EncoderConfig) error {
	path := filepath.Join(src, tokenizer.FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	t, err := tokenizer.Load(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if t.VocabSize() > c.VocabSize {
		return fmt.Errorf("%s has %d ids, more than the model's vocab_size %d: not this model's tokenizer", path, t.VocabSize(), c.VocabSize)
	}
	if t.MaxTypeID() >= max(c.TypeVocabSize, 1) {
		return fmt.Errorf("%s: its post_processor uses type id %d, but the model has %d token types", path, t.MaxTypeID(), c.TypeVocabSize)
	}
	return nil
}
