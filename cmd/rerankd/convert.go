package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// runConvert implements `rerankd convert`: a Hugging Face checkpoint
// (local folder, or a hub repo id downloaded first) to our ONNX folder.
func runConvert(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	from := fs.String("from", "", "checkpoint folder, or a hub repo id such as Qwen/Qwen3-Reranker-0.6B (required)")
	out := fs.String("out", "", "output model folder (required)")
	revision := fs.String("revision", "main", "hub revision (branch, tag or commit)")
	tok := fs.String("tokenizer", defaultTokenizer(), "tokenizer used when the checkpoint has none (env RERANKD_TOKENIZER)")
	external := fs.Bool("external-data", false, "always write weights to model.onnx.data (always done above 1.5 GB)")
	noShared := fs.Bool("no-shared-prefix", false, "do not write shared_prefix.onnx (the graph that computes a request's shared prefix once; it shares model.onnx.data)")
	quants := fs.String("quant", "int8", "quantised variants to write next to the float32 graphs, comma-separated: int8 (per-channel int8 weights, per-row int8 activations), "+
		quantList(onnx.Quants()[1:])+" (docs/int8-precision.md), or none")
	setGraph := graphFlags(fs)
	kind := fs.String("kind", "auto", "auto (Qwen3Model architecture or sentence-transformers embedding files mean embedding), reranker or embedding")
	tmplFlag := fs.String("template", "", "prompt template: "+rerank.TemplateQwen3Reranker+", "+rerank.TemplateMxbaiV2+
		", or a rerankd_template.json file (default: the source's own, a known repo's, or Qwen3-Reranker's for a Qwen3 model)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *from == "" || *out == "" {
		return fmt.Errorf("%w: --from and --out are required", errUsage)
	}
	k, err := folder.ParseModelKind(*kind)
	if err != nil {
		return fmt.Errorf("%w: --kind: %w", errUsage, err)
	}
	// With --kind auto an embedding checkpoint is only known inside Convert,
	// which ignores Quants for it.
	qs, err := quantsFor(fs, *quants, k != folder.KindEmbedding, onnx.HeadLogit)
	if err != nil {
		return err
	}
	var bo folder.BuildOptions
	if err := setGraph(&bo); err != nil {
		return err
	}
	var tmpl *rerank.Template
	if *tmplFlag != "" {
		t, err := rerank.ParseTemplate(*tmplFlag)
		if err != nil {
			return fmt.Errorf("%w: --template: %w", errUsage, err)
		}
		tmpl = &t
	}
	src := *from
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		if why, ok := meantAsPath(src); ok && os.IsNotExist(err) {
			return fmt.Errorf("%w: --from %q: no such folder (%s), so it is not taken as a hub repo id", errUsage, src, why)
		}
		if verr := hf.ValidateRepoID(src); verr != nil {
			return fmt.Errorf("%w: --from %q is neither a folder nor a repo id: %w", errUsage, src, verr)
		}
		dir, err := download(src, *revision, stderr)
		if err != nil {
			return err
		}
		if t, ok := folder.RepoTemplate(src); ok && tmpl == nil && !hasTemplate(dir) {
			tmpl = &t
		}
		src = dir
	}
	fmt.Fprintf(stderr, "converting %s\n", src)
	warn := func(msg string) { fmt.Fprintf(stderr, "rerankd convert: warning: %s\n", msg) }
	bo.Tokenizer = *tok
	bo.ForceExternal = *external
	bo.Kind = k
	bo.NoSharedPrefix = *noShared
	bo.Quants = qs
	bo.Template = tmpl
	bo.Warn = warn
	if err := folder.Convert(src, *out, bo); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s\n", *out)
	return err
}

// hasTemplate reports whether a downloaded repo carries its own template
// (rerankd's file), which then wins over the known-repo table.
func hasTemplate(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, rerank.TemplateFile))
	return err == nil
}

// download fetches a repo into the cache with a progress bar per file.
// HF_ENDPOINT and HF_TOKEN (or HUGGING_FACE_HUB_TOKEN) are honoured.
func download(repo, revision string, stderr io.Writer) (string, error) {
	cfg := hf.DefaultConfig()
	cfg.Endpoint = paths.HubEndpoint(cfg.Endpoint)
	cfg.Token = paths.HubToken()
	cfg.Revision = revision
	cfg.CacheDir = filepath.Join(cacheDir(), "hub")
	var mu sync.Mutex
	bars := map[string]*progress.Bar{}
	cfg.Progress = func(file string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		b, ok := bars[file]
		if !ok {
			b = progress.New(stderr, total, file, progress.Bytes)
			bars[file] = b
		}
		b.Set(done)
	}
	c, err := hf.NewClient(cfg)
	if err != nil {
		return "", err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "downloading %s@%s from %s\n", repo, revision, hf.RedactEndpoint(cfg.Endpoint))
	return c.Download(ctx, repo)
}
