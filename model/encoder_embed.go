package model

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// encoderPooler is what encoderEmbedEngine runs: EncoderSession or
// EncoderReference.
type encoderPooler interface {
	Embed(ctx context.Context, rows []Encoded, p arch.Pooling) ([][]float32, error)
	Close() error
}

// encoderEmbedEngine is the EmbedEngine of a bare BERT / XLM-R encoder:
// each sequence (the tokenizer's ids, special tokens included; one text,
// so every type id 0) pooled as the folder's sentence-transformers files
// say. Rows are right-padded and padding is masked, so batches may mix
// lengths.
type encoderEmbedEngine struct {
	e    encoderPooler
	pool arch.Pooling
	dim  int
}

func (e *encoderEmbedEngine) Pooled(ctx context.Context, seqs [][]int) ([][]float32, error) {
	rows := make([]Encoded, len(seqs))
	for i, s := range seqs {
		rows[i].IDs = s
	}
	return e.e.Embed(ctx, rows, e.pool)
}

func (e *encoderEmbedEngine) Dim() int                { return e.dim }
func (e *encoderEmbedEngine) SameLengthBatches() bool { return false }
func (e *encoderEmbedEngine) Close() error            { return e.e.Close() }

// openEncoderEmbedder is OpenEmbedder for an encoder folder
// (IsEncoderFolder): text through EncoderTokenizer.Encode, cut where
// sentence-transformers cuts it (folder.ReadInputLimit: BGE-M3's
// max_seq_length 8192) unless EmbedConfig.MaxLength says less; the query and document prompts of
// config_sentence_transformers.json when it has them, else none (BGE-M3's
// dense vectors take the text as it is); no instruction.
func openEncoderEmbedder(dir, modelPath string, o EmbedderOptions) (*Embedder, error) {
	cfg, err := onnx.ReadEncoderConfig(modelPath)
	if err != nil {
		return nil, fmt.Errorf("encoder model folder %s: %w", dir, err)
	}
	if cfg.Classifier() {
		return nil, fmt.Errorf("model folder %s is a reranker (%v), not an embedding model: serve it with --model", dir, cfg.Architectures)
	}
	if o.Embed.Instruction != "" {
		return nil, fmt.Errorf("model %s (%v) has no instruction format: leave the embedding instruction empty", dir, cfg.Architectures)
	}
	pool, poolDim, err := folder.ReadEncoderPoolingDim(dir)
	if err != nil {
		return nil, err
	}
	st, err := folder.ReadSTPrompts(dir)
	if err != nil {
		return nil, err
	}
	enc, err := encoderTokenizer(dir, o.LoadOptions)
	if err != nil {
		return nil, err
	}
	if err := checkVocab(dir, enc, cfg); err != nil {
		return nil, err
	}
	var run encoderPooler
	info := EmbedderInfo{Dir: dir, Engine: o.Engine}
	switch o.Engine {
	case EngineReference:
		m, err := onnx.Load(filepath.Dir(modelPath))
		if err != nil {
			return nil, err
		}
		w, err := m.EncoderWeights()
		if err != nil {
			return nil, err
		}
		run = NewEncoderReference(w)
	default:
		if err := InitRuntime(o.RuntimeLib); err != nil {
			return nil, err
		}
		s, err := OpenEncoderSession(modelPath, o.Session)
		if err != nil {
			return nil, err
		}
		info.Output, info.Runtime = EmbedOutputHidden, RuntimeVersion()
		run = s
	}
	ec := o.Embed
	lim, err := folder.ReadInputLimit(dir, cfg.MaxPositionEmbeddings, cfg.MaxTokens())
	if err != nil {
		_ = run.Close()
		return nil, err
	}
	if ec.MaxLength == 0 {
		ec.MaxLength, info.MaxLengthSource = lim.Tokens, lim.String()
	} else {
		ec.MaxLength = min(ec.MaxLength, cfg.MaxTokens())
		info.MaxLengthSource = fmt.Sprintf("set by the caller (%d tokens; the model's own limit: %s)", ec.MaxLength, lim)
	}
	ec.BatchTokens = max(ec.BatchTokens, ec.MaxLength)
	e := &Embedder{enc: enc, cfg: ec, docPrefix: st.DocPrompt, prompts: st.Prompts, engine: &encoderEmbedEngine{e: run, pool: pool, dim: cfg.HiddenSize}}
	if st.HasQuery {
		e.queryPrefix = st.QueryPrompt
	}
	info.QueryPrefix = e.queryPrefix
	e.info = info
	if err := e.resolveDim(nil, poolDim); err != nil {
		_ = e.engine.Close()
		return nil, err
	}
	return e, nil
}
