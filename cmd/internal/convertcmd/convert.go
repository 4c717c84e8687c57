// Package convertcmd is rerankd convert: a Hugging Face checkpoint (a
// folder, or a hub repo downloaded first) to a model folder. The lab's
// tests convert their generated checkpoints with it too.
package convertcmd

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/graphflags"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

// Run implements rerankd convert: a Hugging Face checkpoint (local folder,
// or a hub repo id downloaded first) to our ONNX folder, or an encoder
// folder an older rerankd converted (weights inside its graphs) to the
// external-data layout.
func Run(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	from := fs.String("from", "", "checkpoint folder, or a hub repo id such as Qwen/Qwen3-Reranker-0.6B (required); a BERT / XLM-R folder converted by an older rerankd is rewritten with its weights in external data (--out may be the same folder)")
	out := fs.String("out", "", "output model folder (required)")
	revision := fs.String("revision", "main", "hub revision (branch, tag or commit)")
	tok := fs.String("tokenizer", paths.Tokenizer(), "tokenizer used when the checkpoint has none (env RERANKD_TOKENIZER)")
	external := fs.Bool("external-data", false, "always write weights to model.onnx.data (always done for BERT / XLM-R models, and when the weights are too large for one protobuf file)")
	noShared := fs.Bool("no-shared-prefix", false, "do not write shared_prefix.onnx (the graph that computes a request's shared prefix once; it shares model.onnx.data)")
	quants := fs.String("quant", "int8", "quantised variants to write next to the float32 graphs, comma-separated: int8 (per-channel int8 weights, per-row int8 activations), "+
		graphflags.QuantList(onnx.Quants()[1:])+" (docs/perf/int8-precision.md), or none")
	setGraph := graphflags.Graph(fs)
	kind := fs.String("kind", "auto", "auto (Qwen3Model architecture or sentence-transformers embedding files mean embedding), reranker or embedding")
	tmplFlag := fs.String("template", "", "prompt template: "+rerank.TemplateQwen3Reranker+", "+rerank.TemplateMxbaiV2+
		", or a rerankd_template.json file (default: the source's own, a known repo's, or Qwen3-Reranker's for a Qwen3 model)")
	if err := cli.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *from == "" || *out == "" {
		return fmt.Errorf("%w: --from and --out are required", cli.ErrUsage)
	}
	k, err := folder.ParseModelKind(*kind)
	if err != nil {
		return fmt.Errorf("%w: --kind: %w", cli.ErrUsage, err)
	}
	// With --kind auto an embedding checkpoint is only known inside Convert,
	// which ignores Quants for it.
	qs, err := graphflags.QuantsFor(fs, *quants, k != folder.KindEmbedding, onnx.HeadLogit)
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
			return fmt.Errorf("%w: --template: %w", cli.ErrUsage, err)
		}
		tmpl = &t
	}
	src := *from
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		if verr := hf.ValidateRepoID(src); verr != nil {
			return fmt.Errorf("%w: --from %q is neither a folder nor a repo id: %w", cli.ErrUsage, src, verr)
		}
		dir, err := app.Download(src, *revision, stderr)
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
