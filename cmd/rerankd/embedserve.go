package main

// The embedding routes' flags and wiring (/v1/embeddings, /embed,
// /v1/models, /tokenize): kept in this one file so the composition of
// `rerankd serve` takes them as a unit.

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/serve"
)

// embedServeFlags name the served models and bound the embedding queue.
type embedServeFlags struct {
	rerankNames, embedNames string
	queue                   embed.QueueConfig
}

func defineEmbedServeFlags(fs *flag.FlagSet, server *serve.Config) *embedServeFlags {
	e := &embedServeFlags{queue: embed.DefaultQueueConfig()}
	fs.StringVar(&e.rerankNames, "served-model-name", "", "comma-separated names the reranker (--model) is served under: GET /v1/models lists them and every rerank response carries the first (empty: the hub id, the model folder's name, or lexical-bm25 without --model)")
	fs.StringVar(&e.embedNames, "embed-served-model-name", "", "comma-separated names the embedder (--embed-model) is served under on /v1/embeddings and /embed (empty: the hub id, or the model folder's name)")
	fs.BoolVar(&server.StrictModelName, "strict-model-name", false, "refuse a request whose \"model\" is not a served name (404 model_not_found); off, the served model answers and the response names it")
	fs.IntVar(&server.MaxEmbedInputs, "max-embed-inputs", server.MaxEmbedInputs, "texts per /v1/embeddings or /embed request (more: 400/422)")
	fs.IntVar(&e.queue.QueueSize, "embed-queue-size", e.queue.QueueSize, "texts waiting or being embedded (served requests and the memory search together) before embedding requests get 429")
	return e
}

// splitNames parses a comma-separated name list.
func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// servedName is a model argument's default served name: a folder's base
// name, else the argument itself (a hub id).
func servedName(arg string) string {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return filepath.Base(filepath.Clean(arg))
	}
	return arg
}

// rerankerNames sets the reranker's served names on the server config.
func (e *embedServeFlags) rerankerNames(modelArg string, server *serve.Config) {
	server.RerankerNames = splitNames(e.rerankNames)
	switch {
	case len(server.RerankerNames) > 0:
	case modelArg != "":
		server.RerankerNames = []string{servedName(modelArg)}
	default:
		server.RerankerNames = []string{"lexical-bm25"} // the embedded default has no hub id or folder
	}
}

// attachEmbedder opens --embed-model, puts it behind the embedding queue,
// serves it on the embedding routes and hands the queue to the memory
// search, so both share one model and one bound. Without --embed-model it
// does nothing.
func attachEmbedder(f *serveFlags, srv *serve.Server, metrics *serve.Metrics, log *slog.Logger) (func(), error) {
	m := f.memory
	if m.embedModel == "" {
		return func() {}, nil
	}
	eo := model.DefaultEmbedderOptions()
	eo.RuntimeLib, eo.Tokenizer, eo.Session.IntraOpThreads = f.ortLib, f.tok, f.threads
	eo.EncoderTokenizer = f.encoderTokenizer
	e, err := model.OpenEmbedder(m.embedModel, eo)
	if err != nil {
		return nil, fmt.Errorf("--embed-model %s: %w", m.embedModel, err)
	}
	q, err := embed.NewQueue(e, f.embed.queue, metrics)
	if err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("%w: --embed-queue-size: %w", errUsage, err)
	}
	names := splitNames(f.embed.embedNames)
	if len(names) == 0 {
		names = []string{servedName(m.embedModel)}
	}
	em := serve.EmbedModel{Queue: q, Names: names, MaxLength: e.MaxLength(), QueueSize: f.embed.queue.QueueSize,
		Matryoshka: e.Matryoshka(), PromptNames: e.PromptNames(), Tokens: e.TokensWith, TokenText: e.TokenText}
	if err := srv.WithEmbedder(em); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	m.embedder = q
	log.Info("serving embeddings", "model", names[0], "dimensions", e.Dim())
	return func() {
		q.Close()
		_ = e.Close()
	}, nil
}
