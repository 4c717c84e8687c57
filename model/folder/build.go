package folder

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/tokenizer"
)

// BuildOptions configure WriteTestModel and Convert.
type BuildOptions struct {
	// Tokenizer is a folder with tokenizer.json (+ tokenizer_config.json)
	// copied into the output when the source has none.
	Tokenizer string
	// Head selects the graph output; onnx.HeadLogit unless producing
	// community-style layouts for tests.
	Head onnx.Head
	// ForceExternal writes weights to model.onnx.data even when small
	// (encoder folders always do: onnx.EncoderStorage).
	ForceExternal bool
	// NoSharedPrefix skips the shared-prefix graph (onnx.SharedPrefixFile),
	// written by default next to model.onnx for HeadLogit models. It shares
	// model.onnx.data when the weights are external, so it costs a few
	// hundred KB on disk; inline (small) models get a second full copy.
	NoSharedPrefix bool
	// Kind selects what Convert writes; KindAuto (the zero value) detects
	// it from the checkpoint (DetectKind). WriteTestModel always writes a
	// reranker, WriteTestEmbeddingModel an embedding model.
	Kind ModelKind
	// EmbeddingOutputs selects an embedding graph's outputs (default:
	// last_hidden_state only).
	EmbeddingOutputs onnx.EmbeddingOutputs
	// Quants lists quantised variants to write next to the float32 graphs
	// (onnx.QuantFile names them: model.int8.onnx, shared_prefix.int8.onnx).
	// They share the data file, which grows by the quantised weights (int8:
	// a quarter of the float32 projections). Open
	// selects one with Options.Quant. HeadLogit rerankers only (an error
	// with another head); embedding models ignore it.
	Quants []onnx.Quant
	// Fusion selects fused kernels for the reranker graphs
	// (onnx.Options.Fusion); 0, the default, writes standard ops only.
	Fusion onnx.Fusion
	// NoAttentionForm skips the CPU form of each shared-prefix graph
	// (onnx.AttentionFormFile: Fusion plus onnx.FuseAttention), written by
	// default beside it unless Fusion already has FuseAttention. It shares
	// the data file: a few hundred KB more on disk.
	NoAttentionForm bool
	// AttentionFormBuckets is the attention form's
	// onnx.Options.AttentionBuckets; 0 takes
	// onnx.DefaultAttentionFormBuckets.
	AttentionFormBuckets int
	// EncoderFusion selects ONNX Runtime contrib kernels for encoder
	// graphs (BERT, XLM-R: onnx.EncoderOptions.Fusion); 0 writes standard
	// ops only (convert's flag defaults to onnx.DefaultEncoderFusion).
	EncoderFusion onnx.EncoderFusion
	// AttentionBuckets splits a shared-prefix batch's attention into runs
	// of rows padded to their own longest (onnx.Options.AttentionBuckets);
	// 0 takes onnx.DefaultAttentionBuckets.
	AttentionBuckets int
	// CalibrationTexts are what onnx.QuantInt8Smooth measures activation
	// ranges on (through the reference pass, model/ref), raw text with
	// the chat markers; nil uses DefaultCalibrationTexts. Each costs a
	// float32 forward pass in plain Go (~1 min per 100 tokens at 0.6B).
	CalibrationTexts []string
	// Template is the prompt template written into the folder
	// (TemplateFile) and whose answer tokens fold into the head; nil reads
	// the source's (LoadTemplate), or for WriteTestModel the family's
	// default (Qwen3-Reranker's; a Qwen2 config must name one).
	Template *rerank.Template
	// Warn receives each warning about the source, such as a config.json
	// key rerankd neither uses nor knows to be harmless (listed, never
	// guessed at: the user must judge it). Nil logs them with log/slog's
	// default logger, so a caller that forgot still shows them.
	Warn func(string)
}

func (o BuildOptions) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
		return
	}
	slog.Warn(msg)
}

// WriteTestModel writes a complete model folder (model.onnx [+ data],
// config.json, tokenizer files) with seeded random weights of cfg. Such
// models exercise every code path at the real architecture, but their
// scores mean nothing: never use them to judge quality.
func WriteTestModel(out string, cfg arch.Config, seed uint64, o BuildOptions) error {
	w, err := arch.Random(cfg, seed)
	if err != nil {
		return err
	}
	if err := writeFolder(out, w, o.Tokenizer, "", o); err != nil {
		return err
	}
	return writeRandomMarker(out, seed)
}

// Convert reads a Hugging Face checkpoint folder (config.json, safetensors,
// tokenizer files) and writes our ONNX model folder to out: a reranker, or
// an embedding model (see WriteTestEmbeddingModel for its layout) when
// o.Kind or DetectKind says so. A BERT or XLM-R checkpoint
// (IsEncoderCheckpoint) becomes an encoder folder (encoder.go); an encoder
// folder an earlier Convert wrote is rewritten with its weights in one
// external data file (relayoutEncoder), out possibly src itself.
//
// config.json is judged first (arch.ParseConfig): fields whose values ask
// for a computation rerankd does not implement fail the conversion before
// anything is written, all of them in one error; unknown keys go to o.Warn
// (also when the conversion fails). A random-weights marker (MarkerFile)
// in src is carried into out.
func Convert(src, out string, o BuildOptions) error {
	if err := convert(src, out, o); err != nil {
		return err
	}
	return copyMarker(src, out)
}

func convert(src, out string, o BuildOptions) error {
	if enc, err := IsEncoderCheckpoint(src); err != nil {
		return err
	} else if enc {
		return convertEncoder(src, out, o)
	}
	if err := checkArchitecture(src); err != nil {
		return err
	}
	_, warns, err := arch.ReadConfigWarnings(filepath.Join(src, hf.ConfigFile))
	for _, w := range warns {
		o.warn(w)
	}
	if err != nil {
		return err
	}
	kind := o.Kind
	if kind == KindAuto {
		var err error
		if kind, _, err = DetectKind(src); err != nil {
			return err
		}
	}
	if kind == KindEmbedding {
		return convertEmbedding(src, out, o)
	}
	w, err := hf.LoadCheckpoint(src)
	if err != nil {
		return err
	}
	tokDir := o.Tokenizer
	if _, err := os.Stat(filepath.Join(src, tokenizer.FileName)); err == nil {
		tokDir = src
	}
	return writeFolder(out, w, tokDir, src, o)
}

// resolveTemplate returns o.Template, else src's template (LoadTemplate),
// else (no source: a test model) the family's default.
func resolveTemplate(src string, c arch.Config, o BuildOptions) (rerank.Template, error) {
	switch {
	case o.Template != nil:
		return *o.Template, o.Template.Validate()
	case src != "":
		return LoadTemplate(src)
	case c.Family() == arch.FamilyQwen2:
		return rerank.Template{}, fmt.Errorf("a %s model needs a template (BuildOptions.Template, --template %s or a file)", c.Family(), rerank.TemplateMxbaiV2)
	}
	return rerank.Qwen3RerankerTemplate(), nil
}

func writeFolder(out string, w *arch.Weights, tokDir, src string, o BuildOptions) error {
	if tokDir == "" {
		return errors.New("no tokenizer: the source has no tokenizer.json and none was given")
	}
	tok, err := tokenizer.Shared(tokDir)
	if err != nil {
		return err
	}
	tmpl, err := resolveTemplate(src, w.Config, o)
	if err != nil {
		return err
	}
	yes, no, err := tmpl.ScoreIDs(tok)
	if err != nil {
		return err
	}
	tmpl = tmpl.WithIDs(yes, no)
	if err := checkPooling(w.Config, tok, tmpl); err != nil {
		return err
	}
	opts := onnx.NewOptions(yes, no)
	opts.Head = o.Head
	opts.Storage.ForceExternal = o.ForceExternal
	opts.Fusion = o.Fusion
	if o.AttentionBuckets > 0 {
		opts.AttentionBuckets = o.AttentionBuckets
	}
	m, err := onnx.BuildReranker(w, opts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if slices.Contains(o.Quants, onnx.QuantInt8Smooth) || slices.Contains(o.Quants, onnx.QuantInt8SmoothBlock32) {
		if opts.Calibration, opts.SmoothAlpha, err = calibrate(w, tok, o); err != nil {
			return err
		}
	}
	extra, err := variants(w, opts, o)
	if err != nil {
		return err
	}
	// A variant left from an earlier write would not match the new data file.
	for _, q := range append([]onnx.Quant{onnx.QuantNone}, onnx.Quants()...) {
		for _, base := range []string{onnx.ModelFile, onnx.SharedPrefixFile} {
			names := []string{onnx.QuantFile(base, q)}
			if base == onnx.SharedPrefixFile {
				names = append(names, onnx.AttentionFormFile(names[0]))
			}
			for _, name := range names {
				if _, keep := extra[name]; keep || name == onnx.ModelFile {
					continue
				}
				if err := os.Remove(filepath.Join(out, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("remove stale %s: %w", name, err)
				}
			}
		}
	}
	if err := m.SaveWith(out, extra); err != nil {
		return err
	}
	if err := arch.WriteConfig(filepath.Join(out, "config.json"), w.Config); err != nil {
		return err
	}
	if err := WriteTemplate(out, tmpl); err != nil {
		return err
	}
	tokFile := tokDir
	if st, err := os.Stat(tokDir); err == nil && st.IsDir() {
		tokFile = filepath.Join(tokDir, tokenizer.FileName)
	}
	for _, name := range []string{tokenizer.FileName, tokenizer.ConfigFileName} {
		src := filepath.Join(filepath.Dir(tokFile), name)
		err := copyFile(src, filepath.Join(out, name))
		optional := name == tokenizer.ConfigFileName && errors.Is(err, os.ErrNotExist)
		if err != nil && !optional {
			return fmt.Errorf("copy %s: %w", name, err)
		}
	}
	return nil
}

// variants builds the graphs written next to model.onnx, by file name: the
// shared-prefix graph (and its CPU attention form) and the quantised forms
// of both.
func variants(w *arch.Weights, opts onnx.Options, o BuildOptions) (map[string]*onnx.Model, error) {
	extra := map[string]*onnx.Model{}
	if len(o.Quants) > 0 && o.Head != onnx.HeadLogit {
		return nil, fmt.Errorf("quantised variants need head %v, not %v", onnx.HeadLogit, o.Head)
	}
	kinds := []onnx.Quant{onnx.QuantNone}
	for _, q := range o.Quants {
		if !slices.Contains(kinds, q) {
			kinds = append(kinds, q)
		}
	}
	for _, q := range kinds {
		qo := opts
		qo.Quant = q
		if q != onnx.QuantNone {
			m, err := onnx.BuildReranker(w, qo)
			if err != nil {
				return nil, fmt.Errorf("%v variant: %w", q, err)
			}
			extra[onnx.QuantFile(onnx.ModelFile, q)] = m
		}
		if o.Head == onnx.HeadLogit && !o.NoSharedPrefix {
			m, err := onnx.BuildSharedPrefix(w, qo)
			if err != nil {
				return nil, fmt.Errorf("%v shared-prefix variant: %w", q, err)
			}
			name := onnx.QuantFile(onnx.SharedPrefixFile, q)
			extra[name] = m
			if o.NoAttentionForm || qo.Fusion&onnx.FuseAttention != 0 {
				continue
			}
			ao := qo
			ao.Fusion |= onnx.FuseAttention
			ao.AttentionBuckets = cmp.Or(o.AttentionFormBuckets, onnx.DefaultAttentionFormBuckets)
			if extra[onnx.AttentionFormFile(name)], err = onnx.BuildSharedPrefix(w, ao); err != nil {
				return nil, fmt.Errorf("%v shared-prefix variant, attention form: %w", q, err)
			}
		}
	}
	return extra, nil
}

// copyFile copies src to dst atomically (atomicfile.Write), so dst is
// never partial.
func copyFile(src, dst string) error {
	if same, _ := sameFile(src, dst); same {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close() //nolint:errcheck // read-only
	return atomicfile.Write(dst, 0o644, "", func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// checkPooling refuses a sequence-classification checkpoint whose
// pad_token_id ends the prompt template: transformers would then pool at
// an earlier token than the last real one, which the graphs use.
func checkPooling(c arch.Config, tok *tokenizer.Tokenizer, t rerank.Template) error {
	if !c.SeqCls() || c.PadTokenID == nil {
		return nil
	}
	if s := tok.EncodeIDs(t.Suffix); len(s) > 0 && s[len(s)-1] == *c.PadTokenID {
		return fmt.Errorf("pad_token_id %d ends the prompt template: transformers would not pool at its last token", *c.PadTokenID)
	}
	return nil
}
