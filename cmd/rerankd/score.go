package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/rerank"
)

// runScore implements `rerankd score`: one query against --doc documents,
// printing {"scores": [...], "logits": [...]} in document order.
func runScore(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	dir := fs.String("model", "", "model folder (model.onnx, tokenizer.json, ...) (required)")
	query := fs.String("query", "", "the query (required)")
	instruction := fs.String("instruction", "", "task instruction (default: the Qwen3-Reranker web-search instruction)")
	var docs, context stringList
	fs.Var(&docs, "doc", "a document to score (repeat)")
	fs.Var(&context, "context", "a recent conversation turn placed before the query (repeat, oldest first)")
	engine := fs.String("engine", "onnx", "onnx (ONNX Runtime) or reference (plain Go, slow, same weights)")
	ortLib := fs.String("ort-lib", defaultORTLib(), "ONNX Runtime shared library (env ORT_LIB)")
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none (env RERANKD_TOKENIZER)")
	dev := device.Define(fs)
	threads := fs.Int("threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	maxLen := fs.Int("max-length", rerank.DefaultPromptConfig().MaxLength, "most tokens per prompt; documents are cut to fit")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	var missing []string
	if *dir == "" {
		missing = append(missing, "--model")
	}
	if *query == "" {
		missing = append(missing, "--query")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %v required", errUsage, missing)
	}
	o := model.DefaultOptions()
	o.Engine, o.RuntimeLib, o.Tokenizer = model.EngineKind(*engine), dev.ORTLib(*ortLib), *tok
	dev.Apply(&o.Session)
	o.Session.IntraOpThreads = *threads
	o.Scorer.Prompt.MaxLength = *maxLen
	o.Scorer.BatchTokens = max(o.Scorer.BatchTokens, *maxLen)
	if err := o.Validate(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	s, _, err := model.Open(*dir, o)
	if err != nil {
		return err
	}
	defer s.Close() //nolint:errcheck // results are already written
	scores, err := s.Score(contextBackground(), rerank.Request{Instruction: *instruction, Query: *query, Context: context, Docs: docs})
	if err != nil {
		return err
	}
	out := struct {
		Scores []float64 `json:"scores"`
		Logits []float64 `json:"logits"`
	}{Scores: make([]float64, len(scores)), Logits: make([]float64, len(scores))}
	for i, sc := range scores {
		out.Scores[i], out.Logits[i] = sc.Score, sc.Logit
	}
	return json.NewEncoder(stdout).Encode(out)
}

// contextBackground is the root context of one CLI command.
func contextBackground() context.Context { return context.Background() }
