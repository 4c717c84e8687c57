package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// stringList is a repeatable string flag (--doc a --doc b).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseFlags parses args and turns flag errors into usage errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	return cli.ParseFlags(fs, args, stderr)
}

// defaultORTLib is $ORT_LIB or the library scripts/setup.sh installs.
func defaultORTLib() string { return paths.ORTLib() }

// parseQuants parses a comma-separated list of quantised weight kinds
// ("int8"; "" or "none" for none).
func parseQuants(s string) ([]onnx.Quant, error) {
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

// quantsFor resolves the --quant flag of testmodel and convert: quantised
// variants exist for logit-head rerankers only, so elsewhere the default is
// dropped and an explicit list is an error.
func quantsFor(fs *flag.FlagSet, list string, reranker bool, head onnx.Head) ([]onnx.Quant, error) {
	qs, err := parseQuants(list)
	if err != nil {
		return nil, fmt.Errorf("%w: --quant: %w", errUsage, err)
	}
	if reranker && head == onnx.HeadLogit {
		return qs, nil
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "quant" })
	if explicit && len(qs) > 0 {
		return nil, fmt.Errorf("%w: --quant: quantised variants are written for logit-head rerankers only", errUsage)
	}
	return nil, nil
}

// graphFlags registers the graph-form flags testmodel and convert share
// and returns a function that sets them on BuildOptions after parsing.
func graphFlags(fs *flag.FlagSet) func(*folder.BuildOptions) error {
	fusion := fs.String("graph-fusion", onnx.DefaultFusion.String(),
		"fused kernels in the reranker graphs: none (standard ops), all, or names from rotary, skipnorm, scores, attention joined by + (docs/graph-fusion.md)")
	buckets := fs.Int("attention-buckets", onnx.DefaultAttentionBuckets,
		"runs of rows the shared-prefix graph pads to their own longest row (1-8)")
	attnForm := fs.Bool("attention-form", true,
		"also write each shared-prefix graph's CPU attention form (shared_prefix.attn.onnx: the graph fusion plus attention; serve runs it on the CPU), unless --graph-fusion has attention already")
	formBuckets := fs.Int("attention-form-buckets", onnx.DefaultAttentionFormBuckets, "--attention-buckets of the attention form (1-8)")
	encFusion := fs.String("encoder-fusion", onnx.DefaultEncoderFusion.String(),
		"ONNX Runtime contrib kernels in BERT / XLM-R graphs: none (standard ops), all, or names from skipnorm, gelu, attention joined by + (docs/encoders.md)")
	return func(o *folder.BuildOptions) error {
		f, err := onnx.ParseFusion(*fusion)
		if err != nil {
			return fmt.Errorf("%w: --graph-fusion: %w", errUsage, err)
		}
		if o.EncoderFusion, err = onnx.ParseEncoderFusion(*encFusion); err != nil {
			return fmt.Errorf("%w: --encoder-fusion: %w", errUsage, err)
		}
		if *buckets < 1 || *buckets > 8 {
			return fmt.Errorf("%w: --attention-buckets %d: want 1..8", errUsage, *buckets)
		}
		if *formBuckets < 1 || *formBuckets > 8 {
			return fmt.Errorf("%w: --attention-form-buckets %d: want 1..8", errUsage, *formBuckets)
		}
		o.Fusion, o.AttentionBuckets, o.NoAttentionForm, o.AttentionFormBuckets = f, *buckets, !*attnForm, *formBuckets
		return nil
	}
}
