package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// runTestModel implements `rerankd testmodel`: a complete model folder of
// the Qwen3-Reranker architecture (or, with --kind embedding, a
// Qwen3-Embedding-layout embedding model) with seeded random weights. For
// tests and speed work only: its scores and vectors carry no meaning.
func runTestModel(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testmodel", flag.ContinueOnError)
	out := fs.String("out", "", "output folder (required)")
	size := fs.String("size", "tiny", "tiny (2 layers, small dims, real vocabulary) or full (Qwen3-Reranker-0.6B dimensions, ~2.4 GB)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same weights")
	head := fs.String("head", "logit", "output layout: logit (ours), yes_no, vocab_last or vocab_all (community-export layouts, for tests)")
	kind := fs.String("kind", "reranker", "reranker, or embedding (Qwen3-Embedding layout: last_hidden_state output, no head)")
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer folder copied into the model (env RERANKD_TOKENIZER)")
	noShared := fs.Bool("no-shared-prefix", false, "do not write shared_prefix.onnx (the graph that computes a request's shared prefix once; it shares model.onnx.data)")
	quants := fs.String("quant", "int8", "quantised variants to write next to the float32 graphs: int8 (per-channel int8 weights, per-row int8 activations), or none")
	setGraph := graphFlags(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out required", errUsage)
	}
	var cfg arch.Config
	switch *size {
	case "tiny":
		cfg = arch.Tiny()
	case "full":
		cfg = arch.Qwen3Reranker06B()
	default:
		return fmt.Errorf("%w: --size %q: want tiny or full", errUsage, *size)
	}
	h, err := onnx.ParseHead(*head)
	if err != nil {
		return fmt.Errorf("%w: --head: %w", errUsage, err)
	}
	k, err := folder.ParseModelKind(*kind)
	if err != nil || k == folder.KindAuto {
		return fmt.Errorf("%w: --kind %q: want reranker or embedding", errUsage, *kind)
	}
	qs, err := quantsFor(fs, *quants, k == folder.KindReranker, h)
	if err != nil {
		return err
	}
	var bo folder.BuildOptions
	if err := setGraph(&bo); err != nil {
		return err
	}
	write := folder.WriteTestModel
	if k == folder.KindEmbedding {
		write = folder.WriteTestEmbeddingModel
	}
	start := time.Now()
	fmt.Fprintf(stderr, "writing %s %s model (%.2fB parameters, random weights, seed %d) to %s\n", *size, k, float64(cfg.Params())/1e9, *seed, *out)
	bo.Tokenizer = *tok
	bo.Head = h
	bo.NoSharedPrefix = *noShared
	bo.Quants = qs
	if err := write(*out, cfg, *seed, bo); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s in %.1fs (random weights: for tests and speed, not quality)\n", *out, time.Since(start).Seconds())
	return err
}
