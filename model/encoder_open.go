package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/tokenizer"
)

// EncoderTokenizer is how text reaches a BERT / XLM-R model: the model's
// own tokenizer and post-processor, special tokens counted in maxLen, a
// pair cut LongestFirst (rerank.PairEncoder), a single text cut at its end.
type EncoderTokenizer interface {
	rerank.PairEncoder
	Encode(ctx context.Context, text string, maxLen int) (ids []int, truncated bool, err error)
}

// Classes are the model architectures this package serves (Open:
// rerankers, OpenEmbedder: embedding models), each with published
// checkpoints of it; /info and README list them.
var Classes = []Class{
	{"Qwen3ForCausalLM", "reranker", []string{"Qwen/Qwen3-Reranker-0.6B"}},
	{"Qwen3ForSequenceClassification", "reranker", []string{"tomaarsen/Qwen3-Reranker-0.6B-seq-cls"}},
	{"Qwen2ForCausalLM", "reranker", []string{"mixedbread-ai/mxbai-rerank-base-v2"}},
	{"Qwen2ForSequenceClassification", "reranker", []string{"michaelfeil/mxbai-rerank-base-v2-seq"}},
	{arch.ArchXLMRSeqCls, "reranker", []string{"BAAI/bge-reranker-v2-m3", "BAAI/bge-reranker-base", "BAAI/bge-reranker-large"}},
	{arch.ArchBertSeqCls, "reranker", []string{"cross-encoder/ms-marco-MiniLM-L-6-v2", "cross-encoder/ms-marco-MiniLM-L-12-v2"}},
	{"Qwen3Model", "embedding", []string{"Qwen/Qwen3-Embedding-0.6B"}},
	{arch.ArchXLMRModel, "embedding", []string{"BAAI/bge-m3"}},
	{arch.ArchBertModel, "embedding", []string{"sentence-transformers/all-MiniLM-L6-v2"}},
}

// Class is one served model architecture.
type Class struct {
	Architecture string   // config.json architectures
	Kind         string   // reranker or embedding
	Examples     []string // Hugging Face repo ids
}

// IsEncoderFolder reports whether a model folder holds a BERT / XLM-R
// model: its config.json names an encoder model_type or architecture.
func IsEncoderFolder(dir string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	enc, err := arch.EncoderModelType(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(dir, hf.ConfigFile), err)
	}
	return enc, nil
}

// encoderTokenizer returns the tokenizer an encoder folder runs with:
// o.EncoderTokenizer when set, else the folder's own tokenizer.json (never
// the --tokenizer fallback, which is a Qwen tokenizer), which must be a
// WordPiece (BERT) or Unigram (XLM-R) file with a post-processor (the
// special tokens and type ids of a pair). A BPE file is refused by name:
// Qwen's tokenizer never encodes an encoder's input.
func encoderTokenizer(dir string, o LoadOptions) (EncoderTokenizer, error) {
	if o.EncoderTokenizer != nil {
		return o.EncoderTokenizer, nil
	}
	path := filepath.Join(dir, tokenizer.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encoder model folder %s needs its own %s (the model's WordPiece or Unigram tokenizer): %w", dir, tokenizer.FileName, err)
	}
	var head struct {
		Model struct {
			Type string `json:"type"`
		} `json:"model"`
		PostProcessor json.RawMessage `json:"post_processor"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch head.Model.Type {
	case "WordPiece", "Unigram":
	case "BPE", "":
		return nil, fmt.Errorf("%s: a byte-level BPE tokenizer (as Qwen's), not a BERT / XLM-R one (WordPiece or Unigram): refused for an encoder model", path)
	default:
		return nil, fmt.Errorf("%s: tokenizer model %q: an encoder model needs WordPiece or Unigram", path, head.Model.Type)
	}
	if len(head.PostProcessor) == 0 || string(head.PostProcessor) == "null" {
		return nil, fmt.Errorf("%s: no post_processor: the special tokens around an encoder's pair are unknown", path)
	}
	t, err := tokenizer.Shared(path)
	if err != nil {
		return nil, err
	}
	return tokenizerEncoder{t: t, plainSpecial: !o.ControlTokensInText}, nil
}

// checkVocab refuses a tokenizer that can give ids past the model's
// embeddings (a tokenizer of another model); one that does not say its
// size is taken as it is.
func checkVocab(dir string, tok EncoderTokenizer, cfg arch.EncoderConfig) error {
	v, ok := tok.(interface{ VocabSize() int })
	if ok && v.VocabSize() > cfg.VocabSize {
		return fmt.Errorf("model folder %s: %s has %d ids, more than the model's vocab_size %d: not this model's tokenizer",
			dir, tokenizer.FileName, v.VocabSize(), cfg.VocabSize)
	}
	// A template type id past the model's type embeddings would fail every
	// request in the graph; refuse it here with the cause.
	if tt, ok := tok.(interface{ MaxTypeID() int }); ok && tt.MaxTypeID() >= max(cfg.TypeVocabSize, 1) {
		return fmt.Errorf("model folder %s: %s's post_processor uses type id %d, but the model has %d token types (type_vocab_size): not this model's tokenizer",
			dir, tokenizer.FileName, tt.MaxTypeID(), cfg.TypeVocabSize)
	}
	return nil
}

// encoderClassifier is what EncoderEngine runs: EncoderSession or
// EncoderReference.
type encoderClassifier interface {
	Logits(ctx context.Context, rows []Encoded) ([]float32, error)
	Close() error
}

// EncoderEngine is the rerank.Engine (which the scheduler calls) of a
// cross-encoder: each sequence and its token types (the types argument)
// become one Encoded row. Its Cost is rows × longest row, what the
// right-padded graph computes (as text-embeddings-inference budgets); the
// scheduler and the scorer split a request's pairs where padding would
// exceed their MaxPadRatio, and where a call's attention scores would pass
// its bound (CallFits).
type EncoderEngine struct {
	e   encoderClassifier
	cfg arch.EncoderConfig
	// maxScores bounds a call's attention scores in bytes (0: none):
	// Options.EncoderScoresBytes.
	maxScores int64
}

// Logits implements rerank.Engine.
func (e *EncoderEngine) Logits(ctx context.Context, seqs, types [][]int) ([]float32, error) {
	if err := batching.CheckTypes(seqs, types); err != nil {
		return nil, err
	}
	rows := make([]Encoded, len(seqs))
	for i, s := range seqs {
		rows[i].IDs = s
		if types != nil {
			rows[i].TypeIDs = types[i]
		}
	}
	return e.e.Logits(ctx, rows)
}

// Cost implements batching.Coster: rows × longest row.
func (e *EncoderEngine) Cost(seqs [][]int) int { return batching.Padded(seqs) }

// CallFits implements batching.CallBounder: one call's attention scores,
// rows × heads × longest row² float32s, are within the engine's bound, or
// the call is a single row.
func (e *EncoderEngine) CallFits(seqs [][]int) bool {
	if e.maxScores == 0 || len(seqs) <= 1 {
		return true
	}
	return encoderScoresBytes(seqs, e.cfg.NumAttentionHeads) <= e.maxScores
}

// encoderScoresBytes is the size of the attention scores of one layer of
// a padded encoder call over seqs: rows × heads × longest row² float32s.
func encoderScoresBytes(seqs [][]int, heads int) int64 {
	longest := 0
	for _, s := range seqs {
		longest = max(longest, len(s))
	}
	return int64(len(seqs)) * int64(heads) * int64(longest) * int64(longest) * 4
}

// Config returns the encoder's architecture.
func (e *EncoderEngine) Config() arch.EncoderConfig { return e.cfg }

// Close releases the engine.
func (e *EncoderEngine) Close() error { return e.e.Close() }

// openEncoderScorer is Open for an encoder folder (IsEncoderFolder).
func openEncoderScorer(dir string, o Options, info Info) (*rerank.Scorer, Info, error) {
	modelPath := filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, o.Quant))
	cfg, err := onnx.ReadEncoderConfig(modelPath)
	if err != nil {
		return nil, info, fmt.Errorf("encoder model folder %s: %w", dir, err)
	}
	if !cfg.Classifier() {
		return nil, info, fmt.Errorf("model folder %s is an embedding model (%v), not a reranker: serve it with --embed-model", dir, cfg.Architectures)
	}
	// The graph folds the head to one logit (ref.EncoderScoreLogit);
	// score = sigmoid(logit) whatever the activation, and an Identity
	// activation's score is the logit that raw_scores returns, as for
	// the Qwen classifiers.
	if _, err := cfg.ScoreActivation(); err != nil {
		return nil, info, fmt.Errorf("model folder %s: %w", dir, err)
	}
	t0 := time.Now()
	tok, err := encoderTokenizer(dir, o.LoadOptions)
	if err != nil {
		return nil, info, err
	}
	if err := checkVocab(dir, tok, cfg); err != nil {
		return nil, info, err
	}
	info.TokenizerLoad = time.Since(t0)
	t0 = time.Now()
	var run encoderClassifier
	switch o.Engine {
	case EngineReference:
		m, err := onnx.Load(dir)
		if err != nil {
			return nil, info, err
		}
		w, err := m.EncoderWeights()
		if err != nil {
			return nil, info, err
		}
		run = NewEncoderReference(w)
	default:
		if err := InitRuntime(o.RuntimeLib); err != nil {
			return nil, info, err
		}
		s, err := OpenEncoderSession(modelPath, o.Session)
		if err != nil {
			return nil, info, err
		}
		info.Output, info.Runtime = OutputLogit, RuntimeVersion()
		run = s
	}
	info.SessionLoad = time.Since(t0)
	info.Encoder = &cfg
	o.Scorer.Prompt.MaxLength = min(o.Scorer.Prompt.MaxLength, cfg.MaxTokens())
	o.Scorer.BatchTokens = max(o.Scorer.BatchTokens, o.Scorer.Prompt.MaxLength)
	info.MaxLength = o.Scorer.Prompt.MaxLength
	engine := &EncoderEngine{e: run, cfg: cfg}
	if o.Session.Provider == ProviderCPU || o.Session.Provider == "" {
		engine.maxScores = o.EncoderScoresBytes
	}
	sc, err := rerank.NewPairScorer(tok, engine, o.Scorer, rerank.PairModel{Name: dir})
	if err != nil {
		_ = engine.Close()
		return nil, info, err
	}
	return sc, info, nil
}
