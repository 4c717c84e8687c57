package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
)

// Encoded is one input of an encoder (BERT, XLM-R) as its tokenizer's
// post-processor produced it: the ids with their special tokens ("<s> q
// </s></s> d </s>", "[CLS] q [SEP] d [SEP]") and, for models with token
// types, the type of each id (0 for the first segment, 1 for the second);
// nil TypeIDs means all 0. Truncation happens before: an encoder's engines
// take the ids as given and refuse rows longer than the model's positions.
type Encoded struct {
	IDs     []int
	TypeIDs []int
}

// checkEncoded reports rows an encoder of c cannot take.
func checkEncoded(c arch.EncoderConfig, rows []Encoded) error {
	var errs []error
	for i, r := range rows {
		switch {
		case len(r.IDs) == 0:
			errs = append(errs, fmt.Errorf("input %d is empty", i))
		case len(r.IDs) > c.MaxTokens():
			errs = append(errs, fmt.Errorf("input %d has %d tokens, more than the model's %d", i, len(r.IDs), c.MaxTokens()))
		case r.TypeIDs != nil && len(r.TypeIDs) != len(r.IDs):
			errs = append(errs, fmt.Errorf("input %d has %d type ids for %d tokens", i, len(r.TypeIDs), len(r.IDs)))
		}
	}
	return errors.Join(errs...)
}

// EncoderSession runs an encoder graph written by onnx.BuildEncoder with
// ONNX Runtime: a classifier's logits (Logits) or a bare encoder's hidden
// states (Embed pools them). Rows are right-padded to the longest of the
// call; attention sees only real tokens, so an input's result does not
// depend on what it is batched with. Safe for concurrent use.
type EncoderSession struct {
	sess   *ort.DynamicAdvancedSession
	cfg    arch.EncoderConfig
	types  bool   // the graph has token_type_ids
	output string // logits or last_hidden_state
}

// OpenEncoderSession loads an encoder graph (path: model.onnx of a folder)
// whose architecture is recorded in its metadata. InitRuntime must have
// been called. cfg.MemPattern left to the engine means off here
// (SessionConfig.MemPattern).
func OpenEncoderSession(path string, cfg SessionConfig) (*EncoderSession, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MemPattern == MemPatternAuto {
		cfg.MemPattern = MemPatternOff
	}
	if !ort.IsInitialized() {
		return nil, errors.New("onnx runtime not initialised: call InitRuntime first")
	}
	c, err := onnx.ReadEncoderConfig(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIncompatibleModel, path, err)
	}
	warnInlineWeights(path)
	s := &EncoderSession{cfg: c, types: c.TypeVocabSize > 1, output: onnx.OutputLastHidden}
	if c.Classifier() {
		s.output = onnx.OutputLogits
	}
	inputs := []string{onnx.InputIDs, onnx.AttentionMask}
	if s.types {
		inputs = append(inputs, onnx.TokenTypeIDs)
	}
	if s.sess, err = openSession(path, inputs, []string{s.output}, cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// inlineWarnBytes: a graph with more initializer bytes than this inside
// its protobuf was written before encoder folders kept their weights in
// external data (small constants stay inline in every graph).
const inlineWarnBytes = 1 << 20

// warnInlineWeights logs that the graph at path holds its weights inline,
// where ONNX Runtime copies them onto the heap instead of mapping them,
// and how to rewrite the folder. It still loads and scores the same.
func warnInlineWeights(path string) {
	w, err := onnx.ReadWeightStorage(path)
	if err != nil || w.Inline <= inlineWarnBytes {
		return
	}
	dir := filepath.Dir(path)
	slog.Warn("encoder graph keeps its weights inside model.onnx (a folder converted by an older rerankd): ONNX Runtime copies them into memory instead of mapping them; "+
		"`rerankd convert --from "+dir+" --out "+dir+"` rewrites the folder with its weights in external data", "graph", path, "inline_mb", w.Inline/1e6)
}

// Config returns the encoder's architecture.
func (s *EncoderSession) Config() arch.EncoderConfig { return s.cfg }

// run pads rows and runs the graph; it returns the output's data and the
// padded width.
func (s *EncoderSession) run(ctx context.Context, rows []Encoded) ([]float32, int, error) {
	if err := checkEncoded(s.cfg, rows); err != nil {
		return nil, 0, err
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r.IDs))
	}
	n := len(rows) * width
	ids, mask, types := make([]int64, n), make([]int64, n), make([]int64, n)
	pad := int64(s.cfg.PadID())
	for b, r := range rows {
		for j := range width {
			ids[b*width+j] = pad
		}
		for j, id := range r.IDs {
			ids[b*width+j], mask[b*width+j] = int64(id), 1
			if r.TypeIDs != nil {
				types[b*width+j] = int64(r.TypeIDs[j])
			}
		}
	}
	shape := ort.NewShape(int64(len(rows)), int64(width))
	feeds := [][]int64{ids, mask}
	if s.types {
		feeds = append(feeds, types)
	}
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			release(v)
		}
	}()
	for _, data := range feeds {
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, 0, err
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	if err := runCtx(ctx, s.sess, inputs, outputs); err != nil {
		return nil, 0, err
	}
	defer release(outputs[0])
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, 0, fmt.Errorf("output %q is %T, want a float32 tensor", s.output, outputs[0])
	}
	return slices.Clone(t.GetData()), width, nil
}

// Logits returns a classifier's logit per row (ref.EncoderScoreLogit's):
// score = sigmoid(logit), or the logit itself for arch.ActIdentity.
func (s *EncoderSession) Logits(ctx context.Context, rows []Encoded) ([]float32, error) {
	if s.output != onnx.OutputLogits {
		return nil, errors.New("not a classifier: the graph outputs " + s.output)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out, _, err := s.run(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(out) != len(rows) {
		return nil, fmt.Errorf("logits: %d values for %d rows", len(out), len(rows))
	}
	return out, nil
}

// Embed returns each row's hidden states pooled by p (padding dropped
// first, so it never enters a mean or a max).
func (s *EncoderSession) Embed(ctx context.Context, rows []Encoded, p arch.Pooling) ([][]float32, error) {
	if s.output != onnx.OutputLastHidden {
		return nil, errors.New("not a bare encoder: the graph outputs " + s.output)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out, width, err := s.run(ctx, rows)
	if err != nil {
		return nil, err
	}
	h := s.cfg.HiddenSize
	if len(out) != len(rows)*width*h {
		return nil, fmt.Errorf("last_hidden_state: %d values for %d x %d x %d", len(out), len(rows), width, h)
	}
	vecs := make([][]float32, len(rows))
	for b, r := range rows {
		real := make([][]float32, len(r.IDs))
		for j := range real {
			at := (b*width + j) * h
			real[j] = out[at : at+h]
		}
		if vecs[b], err = p.Pool(real); err != nil {
			return nil, err
		}
	}
	return vecs, nil
}

// Close releases the session.
func (s *EncoderSession) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	return err
}

// EncoderReference runs the plain-Go encoder pass (ref.EncoderHidden) with
// the same methods as EncoderSession: one row at a time, in parallel
// across rows. The oracle of the tests and `--engine reference`.
type EncoderReference struct{ w *arch.EncoderWeights }

// NewEncoderReference returns a reference engine over w.
func NewEncoderReference(w *arch.EncoderWeights) *EncoderReference { return &EncoderReference{w: w} }

// Config returns the encoder's architecture.
func (e *EncoderReference) Config() arch.EncoderConfig { return e.w.Config }

// Logits is EncoderSession.Logits on the reference pass.
func (e *EncoderReference) Logits(ctx context.Context, rows []Encoded) ([]float32, error) {
	out := make([]float32, len(rows))
	return out, e.each(ctx, rows, func(i int, r Encoded) (err error) {
		out[i], err = ref.EncoderScoreLogit(e.w, r.IDs, r.TypeIDs)
		return err
	})
}

// Embed is EncoderSession.Embed on the reference pass.
func (e *EncoderReference) Embed(ctx context.Context, rows []Encoded, p arch.Pooling) ([][]float32, error) {
	out := make([][]float32, len(rows))
	return out, e.each(ctx, rows, func(i int, r Encoded) (err error) {
		out[i], err = ref.EncoderEmbedding(e.w, r.IDs, r.TypeIDs, p)
		return err
	})
}

func (e *EncoderReference) each(ctx context.Context, rows []Encoded, fn func(int, Encoded) error) error {
	if err := checkEncoded(e.w.Config, rows); err != nil {
		return err
	}
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range rows {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i, r)
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// Close is a no-op: the weights are plain Go memory.
func (e *EncoderReference) Close() error { return nil }
