// Package graphflags is the flags of the commands that write model
// folders (rerankd convert, rerankd-bench testmodel): the quantised
// variants and the graph forms, parsed into folder.BuildOptions.
package graphflags

import (
	"flag"
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// ParseQuants parses a comma-separated list of quantised weight kinds
// ("int8"; "" or "none" for none).
func ParseQuants(s string) ([]onnx.Quant, error) {
	var out []onnx.Quant
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "none" {
			continue
		}
		q, err := onnx.ParseQuant(f)
		if err != nil {
			return nil, err
		}
		if q != onnx.QuantNone {
			out = append(out, q)
		}
	}
	return out, nil
}

// QuantsFor resolves the --quant flag of testmodel and convert: quantised
// variants exist for logit-head rerankers only, so elsewhere the default is
// dropped and an explicit list is an error.
func QuantsFor(fs *flag.FlagSet, list string, reranker bool, head onnx.Head) ([]onnx.Quant, error) {
	qs, err := ParseQuants(list)
	if err != nil {
		return nil, fmt.Errorf("%w: --quant: %w", cli.ErrUsage, err)
	}
	if reranker && head == onnx.HeadLogit {
		return qs, nil
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "quant" })
	if explicit && len(qs) > 0 {
		return nil, fmt.Errorf("%w: --quant: quantised variants are written for logit-head rerankers only", cli.ErrUsage)
	}
	return nil, nil
}

// Graph registers the graph-form flags testmodel and convert share
// and returns a function that sets them on BuildOptions after parsing.
func Graph(fs *flag.FlagSet) func(*folder.BuildOptions) error {
	fusion := fs.String("graph-fusion", onnx.DefaultFusion.String(),
		"fused kernels in the reranker graphs: none (standard ops), all, or names from rotary, skipnorm, scores, attention joined by + (docs/perf/graph-fusion.md)")
	buckets := fs.Int("attention-buckets", onnx.DefaultAttentionBuckets,
		"runs of rows the shared-prefix graph pads to their own longest row (1-8)")
	attnForm := fs.Bool("attention-form", true,
		"also write each shared-prefix graph's CPU attention form (shared_prefix.attn.onnx: the graph fusion plus attention; serve runs it on the CPU), unless --graph-fusion has attention already")
	formBuckets := fs.Int("attention-form-buckets", onnx.DefaultAttentionFormBuckets, "--attention-buckets of the attention form (1-8)")
	encFusion := fs.String("encoder-fusion", onnx.DefaultEncoderFusion.String(),
		"ONNX Runtime contrib kernels in BERT / XLM-R graphs: none (standard ops), all, or names from skipnorm, gelu, attention joined by + (docs/perf/encoders.md)")
	return func(o *folder.BuildOptions) error {
		f, err := onnx.ParseFusion(*fusion)
		if err != nil {
			return fmt.Errorf("%w: --graph-fusion: %w", cli.ErrUsage, err)
		}
		if o.EncoderFusion, err = onnx.ParseEncoderFusion(*encFusion); err != nil {
			return fmt.Errorf("%w: --encoder-fusion: %w", cli.ErrUsage, err)
		}
		if *buckets < 1 || *buckets > 8 {
			return fmt.Errorf("%w: --attention-buckets %d: want 1..8", cli.ErrUsage, *buckets)
		}
		if *formBuckets < 1 || *formBuckets > 8 {
			return fmt.Errorf("%w: --attention-form-buckets %d: want 1..8", cli.ErrUsage, *formBuckets)
		}
		o.Fusion, o.AttentionBuckets, o.NoAttentionForm, o.AttentionFormBuckets = f, *buckets, !*attnForm, *formBuckets
		return nil
	}
}

// QuantList joins the names of qs with commas.
func QuantList(qs []onnx.Quant) string {
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.String()
	}
	return strings.Join(names, ",")
}
