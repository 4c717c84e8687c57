package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/serve"
)

// servedName is a model argument's default served name: a folder's base
// name, else the argument itself (a hub id).
func servedName(arg string) string {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return filepath.Base(filepath.Clean(arg))
	}
	return arg
}

// rerankerNames is the reranker's served names: the configured ones, else
// the hub id or folder name, else lexical-bm25 (the embedded default has
// neither).
func rerankerNames(c Config) []string {
	switch {
	case len(c.Server.RerankerNames) > 0:
		return c.Server.RerankerNames
	case c.Model.Path != "":
		return []string{servedName(c.Model.Path)}
	}
	return []string{"lexical-bm25"}
}

// attachEmbedder opens --embed-model, puts it behind the embedding queue
// and serves it on the embedding routes; the memory search then embeds
// through the same queue (openMemory), so both share one model and one
// bound. Without --embed-model it does nothing.
func (a *App) attachEmbedder(c Config) error {
	dir := c.Memory.EmbedModel
	if dir == "" {
		return nil
	}
	eo := model.DefaultEmbedderOptions()
	eo.RuntimeLib, eo.Tokenizer, eo.Session.IntraOpThreads = c.Model.RuntimeLib, c.Model.Tokenizer, c.Model.Threads
	eo.EncoderTokenizer = c.Tuning.EncoderTokenizer
	eo.ControlTokensInText = c.Model.ControlTokensInText
	e, err := model.OpenEmbedder(dir, eo)
	if err != nil {
		return fmt.Errorf("--embed-model %s: %w", dir, err)
	}
	q, err := embed.NewQueue(e, c.Embedding.Queue, c.Metrics)
	if err != nil {
		_ = e.Close()
		return fmt.Errorf("%w: --embed-queue-size: %w", cli.ErrUsage, err)
	}
	random, err := folder.RandomWeights(dir)
	if err != nil {
		_ = e.Close()
		return fmt.Errorf("--embed-model %s: %w", dir, err)
	}
	if random {
		c.Log.Warn(folder.RandomWeightsWarning, "embed_model", dir)
		fmt.Fprintf(c.Notices, "rerankd serve: warning: --embed-model %s: %s\n", dir, folder.RandomWeightsWarning)
	}
	names := c.Embedding.Names
	if len(names) == 0 {
		names = []string{servedName(dir)}
	}
	em := serve.EmbedModel{Queue: q, Names: names, MaxLength: e.MaxLength(), MaxLengthFrom: e.Info().MaxLengthSource, RandomWeights: random, QueueSize: c.Embedding.Queue.QueueSize,
		Matryoshka: e.Matryoshka(), PromptNames: e.PromptNames(), Tokens: e.TokensWith, TokenText: e.TokenText}
	if err := a.Server.WithEmbedder(em); err != nil {
		_ = e.Close()
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	a.Embedder = q
	a.closeEmbedder = func() {
		q.Close()
		_ = e.Close()
	}
	c.Log.Info("serving embeddings", "model", names[0], "dimensions", e.Dim(), "max_input_tokens", e.MaxLength(), "max_input_tokens_from", e.Info().MaxLengthSource)
	return nil
}
