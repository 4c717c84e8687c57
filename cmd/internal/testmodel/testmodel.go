// Package testmodel writes model folders with seeded random weights: the
// Qwen3-Reranker architecture (or the Qwen3-Embedding layout), and Hugging
// Face checkpoints of BERT-family encoders for rerankd convert. It is
// rerankd-bench's testmodel command, and the tests of both binaries make
// their fixtures with it. Its scores and vectors carry no meaning.
package testmodel

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/graphflags"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/tokenizer"
)

// Run implements rerankd-bench testmodel: a complete model folder of
// the Qwen3-Reranker architecture (or, with --kind embedding, a
// Qwen3-Embedding-layout embedding model) with seeded random weights. For
// tests and speed work only: its scores and vectors carry no meaning.
// With --arch xlmr or bert it writes a Hugging Face checkpoint of a BERT-family
// encoder instead (writeTestEncoder), the input of rerankd convert.
func Run(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testmodel", flag.ContinueOnError)
	out := fs.String("out", "", "output folder (required)")
	size := fs.String("size", "tiny", "tiny (2 layers, small dims, real vocabulary) or full (Qwen3-Reranker-0.6B dimensions)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same weights")
	head := fs.String("head", "logit", "output layout: logit (ours), yes_no, vocab_last or vocab_all (community-export layouts, for tests)")
	kind := fs.String("kind", "reranker", "reranker, or embedding (Qwen3-Embedding layout: last_hidden_state output, no head)")
	tok := fs.String("tokenizer", paths.Tokenizer(), "tokenizer folder copied into the model (env RERANKD_TOKENIZER); with --arch xlmr|bert, a WordPiece or Unigram tokenizer.json (or its folder) copied into the checkpoint, none when not given")
	noShared := fs.Bool("no-shared-prefix", false, "do not write shared_prefix.onnx (the graph that computes a request's shared prefix once; it shares model.onnx.data)")
	external := fs.Bool("external", false, "write the weights to model.onnx.data, shared by the folder's graphs, as a full-size model's always are (a tiny one's are inline by default)")
	quants := fs.String("quant", "int8", "quantised variants to write next to the float32 graphs, comma-separated: int8 (per-channel int8 weights, per-row int8 activations), "+
		graphflags.QuantList(onnx.Quants()[1:])+" (docs/perf/int8-precision.md), or none")
	setGraph := graphflags.Graph(fs)
	archName := fs.String("arch", "qwen3", "qwen3 (a model folder), or xlmr / bert: a Hugging Face checkpoint of an encoder (XLM-R: bge-reranker-v2-m3 / bge-m3 shape at --size full; BERT: ms-marco-MiniLM-L-6-v2 shape) for rerankd convert")
	dtype := fs.String("dtype", "F32", "xlmr/bert: safetensors storage type, F32, BF16 or F16")
	pooling := fs.String("pooling", "", "xlmr/bert --kind embedding: cls, mean or max (default: cls for xlmr as bge-m3, mean for bert), L2-normalised")
	if err := cli.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out required", cli.ErrUsage)
	}
	if *archName == "xlmr" || *archName == "bert" {
		encTok, graphFlag := "", ""
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "tokenizer":
				encTok = *tok
			case "encoder-fusion", "graph-fusion", "attention-buckets", "attention-form", "attention-form-buckets":
				graphFlag = f.Name
			}
		})
		if graphFlag != "" {
			return fmt.Errorf("%w: --%s: --arch %s writes a Hugging Face checkpoint, not a graph: pass it to rerankd convert", cli.ErrUsage, graphFlag, *archName)
		}
		return writeTestEncoder(stdout, stderr, encoderSpec{out: *out, arch: *archName, size: *size, kind: *kind, dtype: *dtype,
			pooling: *pooling, tokenizer: encTok, seed: *seed})
	}
	if *archName != "qwen3" {
		return fmt.Errorf("%w: --arch %q: want qwen3, xlmr or bert", cli.ErrUsage, *archName)
	}
	encFusion := false
	fs.Visit(func(f *flag.Flag) { encFusion = encFusion || f.Name == "encoder-fusion" })
	if encFusion {
		return fmt.Errorf("%w: --encoder-fusion is for BERT / XLM-R graphs (rerankd convert); --arch qwen3 takes --graph-fusion", cli.ErrUsage)
	}
	var cfg arch.Config
	switch *size {
	case "tiny":
		cfg = arch.Tiny()
	case "full":
		cfg = arch.Qwen3Reranker06B()
	default:
		return fmt.Errorf("%w: --size %q: want tiny or full", cli.ErrUsage, *size)
	}
	h, err := onnx.ParseHead(*head)
	if err != nil {
		return fmt.Errorf("%w: --head: %w", cli.ErrUsage, err)
	}
	k, err := folder.ParseModelKind(*kind)
	if err != nil || k == folder.KindAuto {
		return fmt.Errorf("%w: --kind %q: want reranker or embedding", cli.ErrUsage, *kind)
	}
	qs, err := graphflags.QuantsFor(fs, *quants, k == folder.KindReranker, h)
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
	bo.ForceExternal = *external
	bo.Quants = qs
	if err := write(*out, cfg, *seed, bo); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s in %.1fs (random weights: for tests and speed, not quality)\n", *out, time.Since(start).Seconds())
	return err
}

// encoderSpec is what testmodel --arch xlmr|bert writes.
type encoderSpec struct {
	out, arch, size, kind, dtype, pooling string
	// tokenizer is a WordPiece or Unigram tokenizer.json (or its folder)
	// copied into the checkpoint; "" writes none. A tiny model's vocabulary
	// grows to the tokenizer's.
	tokenizer string
	seed      uint64
}

// writeTestEncoder writes a generated encoder checkpoint in the Hugging
// Face layout (config.json, model.safetensors; modules.json and
// 1_Pooling/config.json for an embedding model; tokenizer.json when given).
func writeTestEncoder(stdout, stderr io.Writer, sp encoderSpec) error {
	family := map[string]string{"xlmr": arch.FamilyXLMR, "bert": arch.FamilyBERT}[sp.arch]
	k, err := folder.ParseModelKind(sp.kind)
	if err != nil || k == folder.KindAuto {
		return fmt.Errorf("%w: --kind %q: want reranker or embedding", cli.ErrUsage, sp.kind)
	}
	embed := k == folder.KindEmbedding
	var cfg arch.EncoderConfig
	switch sp.size {
	case "tiny":
		cfg = arch.TinyEncoder(family, embed)
	case "full":
		cfg = arch.MiniLML6()
		if family == arch.FamilyXLMR {
			cfg = arch.BGERerankerV2M3()
		}
		if embed {
			cfg.Architectures, cfg.ID2Label = []string{map[string]string{arch.FamilyXLMR: arch.ArchXLMRModel, arch.FamilyBERT: arch.ArchBertModel}[family]}, nil
		}
	default:
		return fmt.Errorf("%w: --size %q: want tiny or full", cli.ErrUsage, sp.size)
	}
	p := arch.Pooling{Mode: arch.PoolMode(sp.pooling), Normalize: true}
	if sp.pooling == "" {
		p.Mode = map[string]arch.PoolMode{arch.FamilyXLMR: arch.PoolCLS, arch.FamilyBERT: arch.PoolMean}[family]
	}
	if err := p.Validate(); embed && err != nil {
		return fmt.Errorf("%w: --pooling: %w", cli.ErrUsage, err)
	}
	var tokData []byte
	if sp.tokenizer != "" {
		path := sp.tokenizer
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, tokenizer.FileName)
		}
		if tokData, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("--tokenizer: %w", err)
		}
		tk, err := tokenizer.Load(path)
		if err != nil {
			return fmt.Errorf("--tokenizer %s: %w", path, err)
		}
		switch n := tk.VocabSize(); {
		case n > cfg.VocabSize && sp.size == "tiny":
			cfg.VocabSize = n
		case n > cfg.VocabSize:
			return fmt.Errorf("--tokenizer %s: %d ids, more than the model's vocab_size %d", path, n, cfg.VocabSize)
		}
	}
	start := time.Now()
	fmt.Fprintf(stderr, "writing %s %s checkpoint %v (%.1fM parameters, %s, random weights, seed %d) to %s\n",
		sp.size, sp.arch, cfg.Architectures, float64(cfg.Params())/1e6, sp.dtype, sp.seed, sp.out)
	if err := folder.WriteTestEncoderCheckpoint(sp.out, cfg, sp.seed, sp.dtype, p); err != nil {
		return err
	}
	if tokData != nil {
		if err := os.WriteFile(filepath.Join(sp.out, tokenizer.FileName), tokData, 0o644); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(stdout, "wrote %s in %.1fs (a Hugging Face checkpoint: rerankd convert --from %s; random weights, for tests and speed, not quality)\n",
		sp.out, time.Since(start).Seconds(), sp.out)
	return err
}
