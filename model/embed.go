package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/tokenizer"
)

// EmbedConfig sets how texts become token sequences and how they are
// batched.
type EmbedConfig struct {
	// Instruction is the task placed before every query as
	// "Instruct: {Instruction}\nQuery:{query}". "" takes the folder's
	// sentence-transformers "query" prompt when it has one, else
	// folder.DefaultEmbedInstruction. Documents never get an instruction.
	Instruction string
	// MaxLength is the most tokens of one input, the template's tokens
	// (Qwen's appended end-of-text, an encoder's [CLS] ... [SEP])
	// included; longer texts are cut at the end, keeping them. 0, the
	// default, takes the model's own limit: for an encoder folder (BERT,
	// XLM-R, BGE-M3) sentence-transformers' (folder.ReadInputLimit:
	// sentence_bert_config.json max_seq_length, else the tokenizer's
	// model_max_length and the positions), for a Qwen3-Embedding folder
	// DefaultDecoderEmbedMaxLength (the model card uses 8192; 512 keeps
	// CPU cost, quadratic in attention, predictable for memory-sized
	// texts). A value above an encoder's positions is held to them.
	MaxLength int
	// BatchTokens bounds one engine call: rows × longest row (padding
	// counted, since the engine computes it).
	BatchTokens int
	// MaxBatch bounds the rows of one engine call.
	MaxBatch int
	// MaxPadRatio stops an engine call from growing once its computed
	// tokens would exceed MaxPadRatio × its real tokens (0: no limit), as
	// rerank.ScorerConfig.MaxPadRatio does for scoring: an engine that pads
	// computes every row to the longest, and on CPU a call padded far past
	// its real tokens costs more than two calls. Engines that batch only
	// equal lengths never pad, so it does not apply to them.
	MaxPadRatio float64
	// Dim, when > 0, keeps the first Dim values of every vector and
	// re-normalises (Matryoshka representation learning: Qwen3-Embedding
	// is trained so that prefixes from 32 values up remain good
	// embeddings). 0 keeps the model's full size.
	Dim int
}

// DefaultDecoderEmbedMaxLength is a Qwen3-Embedding folder's input limit
// when EmbedConfig.MaxLength is 0.
const DefaultDecoderEmbedMaxLength = 512

// DefaultEmbedConfig returns the defaults.
func DefaultEmbedConfig() EmbedConfig {
	return EmbedConfig{MaxLength: 0, BatchTokens: 8192, MaxBatch: 32, MaxPadRatio: batching.DefaultMaxPadRatio}
}

// Validate reports every problem at once.
func (c EmbedConfig) Validate() error {
	var errs []error
	if c.MaxLength != 0 && c.MaxLength < 2 {
		errs = append(errs, fmt.Errorf("max length %d: want 0 (the model's limit) or >= 2 (a token and the end-of-text token)", c.MaxLength))
	}
	if c.BatchTokens < c.MaxLength {
		errs = append(errs, fmt.Errorf("batch tokens %d: want >= max length %d (one full input)", c.BatchTokens, c.MaxLength))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max batch %d: want >= 1", c.MaxBatch))
	}
	if c.MaxPadRatio != 0 && !(c.MaxPadRatio >= 1) {
		errs = append(errs, fmt.Errorf("max pad ratio %v: want 0 (no limit) or >= 1", c.MaxPadRatio))
	}
	if c.Dim < 0 {
		errs = append(errs, fmt.Errorf("dim %d: want >= 0 (0: the model's size)", c.Dim))
	}
	return errors.Join(errs...)
}

// EmbedderOptions configure OpenEmbedder.
type EmbedderOptions struct {
	LoadOptions
	// Embed configures the input format and batching.
	Embed EmbedConfig
}

// DefaultEmbedderOptions returns the defaults; RuntimeLib must still be set
// for the onnx engine.
func DefaultEmbedderOptions() EmbedderOptions {
	return EmbedderOptions{LoadOptions: DefaultLoadOptions(), Embed: DefaultEmbedConfig()}
}

// Validate reports every problem at once.
func (o EmbedderOptions) Validate() error {
	return errors.Join(o.LoadOptions.Validate(), o.Embed.Validate())
}

// EmbedderInfo describes an opened embedding model.
type EmbedderInfo struct {
	Dir         string
	Engine      EngineKind
	Output      EmbeddingOutput // onnx engine: the output read
	ModelDim    int             // the model's vector size
	Dim         int             // the size Embed returns (ModelDim, or the Matryoshka size)
	QueryPrefix string          // text placed before every query
	EndTokens   []int           // ids appended to every input
	Runtime     string          // ONNX Runtime version (onnx engine)
	// MaxLengthSource says where the input limit (Embedder.MaxLength)
	// came from: the model's files (folder.InputLimit) or the caller.
	MaxLengthSource string
}

// Errors of Embed and OpenEmbedder.
var (
	// ErrEmptyText marks an empty or blank text: it has no meaning to embed.
	ErrEmptyText = embed.ErrEmptyText
	// ErrDimension marks a vector size that does not fit: a model whose
	// graph, config.json and pooling config disagree, a Matryoshka size
	// larger than the model's, or an engine returning another size.
	ErrDimension = errors.New("embedding dimension mismatch")
	// ErrBadVector marks a model output with NaN, Inf or no direction.
	ErrBadVector = errors.New("model produced an invalid vector")
)

// Embedder turns texts into L2-normalised vectors with a Qwen3-Embedding
// style model. It satisfies retrieval's Embedder interface and is safe for
// concurrent use.
type Embedder struct {
	tok         *tokenizer.Tokenizer
	enc         EncoderTokenizer // instead of tok for a BERT / XLM-R folder
	engine      EmbedEngine
	cfg         EmbedConfig
	queryPrefix string
	docPrefix   string
	prompts     map[string]string // the folder's named sentence-transformers prompts
	begin, end  []int             // template ids around every input
	// plainSpecial: special-token strings in input text are plain text
	// (LoadOptions.ControlTokensInText unset).
	plainSpecial bool
	modelDim     int
	dim          int
	info         EmbedderInfo
}

// OpenEmbedder loads an embedding model folder: model.onnx (+ data),
// tokenizer.json (+ tokenizer_config.json), and when present config.json
// and the sentence-transformers files (prompts, pooling). Every size the
// folder states must agree, or it is refused with ErrDimension.
func OpenEmbedder(dir string, o EmbedderOptions) (*Embedder, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	modelPath := filepath.Join(dir, onnx.ModelFile)
	if _, err := os.Stat(modelPath); err != nil {
		return nil, fmt.Errorf("model folder %s: %w", dir, err)
	}
	if enc, err := IsEncoderFolder(dir); err != nil {
		return nil, err
	} else if enc {
		return openEncoderEmbedder(dir, modelPath, o)
	}
	tok, tokPath, err := resolveTokenizer(dir, o.LoadOptions)
	if err != nil {
		return nil, err
	}
	st, err := folder.ReadSTSettings(dir)
	if err != nil {
		return nil, err
	}
	var cfg *arch.Config
	// Information only: the graph fixes the computation.
	if c, err := arch.ReadConfigInfo(filepath.Join(dir, "config.json")); err == nil {
		cfg = &c
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	e := &Embedder{tok: tok, cfg: o.Embed, docPrefix: st.DocPrompt, prompts: st.Prompts, plainSpecial: !o.ControlTokensInText}
	if e.begin, e.end, err = embedTemplate(tok, tokPath); err != nil {
		return nil, err
	}
	switch {
	case o.Embed.Instruction != "":
		e.queryPrefix = folder.QueryPrefix(o.Embed.Instruction)
	case st.HasQuery:
		e.queryPrefix = st.QueryPrompt
	default:
		e.queryPrefix = folder.QueryPrefix(folder.DefaultEmbedInstruction)
	}
	source := fmt.Sprintf("set by the caller (max length %d)", e.cfg.MaxLength)
	if e.cfg.MaxLength == 0 {
		e.cfg.MaxLength = DefaultDecoderEmbedMaxLength
		e.cfg.BatchTokens = max(e.cfg.BatchTokens, e.cfg.MaxLength)
		source = fmt.Sprintf("rerankd's default for Qwen embedding models (%d tokens: CPU cost; the model card scores up to 8192)", DefaultDecoderEmbedMaxLength)
	}
	if fixed := len(e.begin) + len(e.end); e.cfg.MaxLength <= fixed {
		return nil, fmt.Errorf("max length %d leaves no room for text after the %d template tokens", e.cfg.MaxLength, fixed)
	}
	e.info = EmbedderInfo{Dir: dir, Engine: o.Engine, QueryPrefix: e.queryPrefix, EndTokens: e.end, MaxLengthSource: source}
	if e.engine, err = openEmbedEngine(dir, modelPath, tok, o, &e.info); err != nil {
		return nil, err
	}
	if err := e.resolveDim(cfg, st.PoolingDim); err != nil {
		_ = e.engine.Close() // the dimension error is what matters
		return nil, err
	}
	return e, nil
}

// embedTemplate returns the ids the tokenizer's post-processor puts around
// an input, or <|endoftext|> after it when the tokenizer declares none
// (Qwen3-Embedding's own tokenizer.json declares exactly that).
func embedTemplate(tok *tokenizer.Tokenizer, tokPath string) (begin, end []int, err error) {
	t, ok, err := folder.ReadPostProcessor(tokPath)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		id, found := tok.TokenID(folder.EndOfText)
		if !found {
			return nil, nil, fmt.Errorf("tokenizer has no %s token and no post-processor template: not a Qwen tokenizer", folder.EndOfText)
		}
		return nil, []int{id}, nil
	}
	for _, id := range append(append([]int(nil), t.Prefix...), t.Suffix...) {
		if _, ok := tok.Token(id); !ok {
			return nil, nil, fmt.Errorf("tokenizer template token id %d is outside the vocabulary", id)
		}
	}
	return t.Prefix, t.Suffix, nil
}

func openEmbedEngine(dir, modelPath string, tok *tokenizer.Tokenizer, o EmbedderOptions, info *EmbedderInfo) (EmbedEngine, error) {
	if o.Engine == EngineReference {
		m, err := onnx.Load(dir)
		if err != nil {
			return nil, err
		}
		w, err := m.BackboneWeights()
		if err != nil {
			return nil, err
		}
		return NewReferenceEmbedEngine(w), nil
	}
	if err := InitRuntime(o.RuntimeLib); err != nil {
		return nil, err
	}
	s, err := OpenEmbeddingSession(modelPath, padID(tok), o.Session)
	if err != nil {
		return nil, err
	}
	info.Output, info.Runtime = s.Output(), RuntimeVersion()
	return s, nil
}

// resolveDim settles the model's vector size from the graph, config.json
// and 1_Pooling/config.json (every one given must agree), probing the
// engine with one input when none states it, then applies EmbedConfig.Dim.
func (e *Embedder) resolveDim(cfg *arch.Config, poolingDim int) error {
	type claim struct {
		from string
		dim  int
	}
	var claims []claim
	if d := e.engine.Dim(); d > 0 {
		claims = append(claims, claim{"the graph", d})
	}
	if cfg != nil {
		claims = append(claims, claim{"config.json hidden_size", cfg.HiddenSize})
	}
	if poolingDim > 0 {
		claims = append(claims, claim{folder.STPoolingFile + " word_embedding_dimension", poolingDim})
	}
	if len(claims) == 0 {
		v, err := e.engine.Pooled(context.Background(), [][]int{e.wrap(e.tok.EncodeIDs("dimension probe"))})
		if err != nil {
			return fmt.Errorf("probe the embedding size: %w", err)
		}
		claims = append(claims, claim{"a probe run", len(v[0])})
	}
	for _, c := range claims[1:] {
		if c.dim != claims[0].dim {
			return fmt.Errorf("%w: %s says %d, %s says %d", ErrDimension, claims[0].from, claims[0].dim, c.from, c.dim)
		}
	}
	e.modelDim, e.dim = claims[0].dim, claims[0].dim
	if e.cfg.Dim > 0 {
		if e.cfg.Dim > e.modelDim {
			return fmt.Errorf("%w: requested dim %d is larger than the model's %d", ErrDimension, e.cfg.Dim, e.modelDim)
		}
		e.dim = e.cfg.Dim
	}
	e.info.ModelDim, e.info.Dim = e.modelDim, e.dim
	return nil
}

// NewEmbedder combines a tokenizer and an engine whose vector size is
// known (tests and callers building engines themselves). Queries get
// folder.QueryPrefix(cfg.Instruction or the default), documents nothing, and
// every input ends with <|endoftext|>.
func NewEmbedder(tok *tokenizer.Tokenizer, engine EmbedEngine, cfg EmbedConfig) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	id, ok := tok.TokenID(folder.EndOfText)
	if !ok {
		return nil, fmt.Errorf("tokenizer has no %s token", folder.EndOfText)
	}
	instr := cfg.Instruction
	if instr == "" {
		instr = folder.DefaultEmbedInstruction
	}
	if cfg.MaxLength == 0 {
		cfg.MaxLength = DefaultDecoderEmbedMaxLength
		cfg.BatchTokens = max(cfg.BatchTokens, cfg.MaxLength)
	}
	e := &Embedder{tok: tok, engine: engine, cfg: cfg, queryPrefix: folder.QueryPrefix(instr), end: []int{id}, plainSpecial: true}
	e.info = EmbedderInfo{QueryPrefix: e.queryPrefix, EndTokens: e.end}
	if err := e.resolveDim(nil, 0); err != nil {
		return nil, err
	}
	return e, nil
}

// WithConfig returns an embedder sharing e's tokenizer, engine and prompts
// under other settings (another instruction, length, batching or
// Matryoshka size); an empty Instruction keeps e's query prefix. Closing
// either closes the shared engine.
func (e *Embedder) WithConfig(cfg EmbedConfig) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxLength == 0 {
		cfg.MaxLength = e.cfg.MaxLength
		cfg.BatchTokens = max(cfg.BatchTokens, cfg.MaxLength)
	}
	if fixed := len(e.begin) + len(e.end); cfg.MaxLength <= fixed {
		return nil, fmt.Errorf("max length %d leaves no room for text after the %d template tokens", cfg.MaxLength, fixed)
	}
	if e.enc != nil && cfg.Instruction != "" {
		return nil, fmt.Errorf("model %s has no instruction format: leave the embedding instruction empty", e.info.Dir)
	}
	if cfg.Dim > e.modelDim {
		return nil, fmt.Errorf("%w: requested dim %d is larger than the model's %d", ErrDimension, cfg.Dim, e.modelDim)
	}
	c := *e
	c.cfg = cfg
	if cfg.Instruction != "" {
		c.queryPrefix = folder.QueryPrefix(cfg.Instruction)
	}
	c.dim = e.modelDim
	if cfg.Dim > 0 {
		c.dim = cfg.Dim
	}
	c.info.QueryPrefix, c.info.Dim = c.queryPrefix, c.dim
	return &c, nil
}

// Dim is the size of the vectors Embed returns.
func (e *Embedder) Dim() int { return e.dim }

// Info describes the model.
func (e *Embedder) Info() EmbedderInfo {
	info := e.info
	info.EndTokens = slices.Clone(info.EndTokens)
	return info
}

// Close closes the engine.
func (e *Embedder) Close() error { return e.engine.Close() }

// Tokens returns the token ids a text is embedded from and whether it was
// cut to fit MaxLength: the query prefix (queries) or document prompt,
// the text, and the template's end tokens.
//
// For an encoder folder they are its tokenizer's ids (special tokens
// included) and a text the tokenizer cannot encode gives nil: Embed
// reports its error.
func (e *Embedder) Tokens(text string, isQuery bool) ([]int, bool) {
	ids, cut, _ := e.tokens(text, isQuery)
	return ids, cut
}

func (e *Embedder) tokens(text string, isQuery bool) ([]int, bool, error) {
	return e.tokensWith(context.Background(), text, embed.Options{Query: isQuery})
}

// TokensWith is Tokens under o (a named prompt, the truncation
// direction, a refusal instead of a cut); it stops with ctx's error when
// ctx is done.
func (e *Embedder) TokensWith(ctx context.Context, text string, o embed.Options) ([]int, bool, error) {
	return e.tokensWith(ctx, text, o)
}

func (e *Embedder) wrap(body []int) []int {
	ids := make([]int, 0, len(e.begin)+len(body)+len(e.end))
	return append(append(append(ids, e.begin...), body...), e.end...)
}

// Embed returns one L2-normalised vector of Dim values per text, in order.
// Queries (isQuery) get the instruction prefix; documents are embedded as
// they are. Inputs run in length-sorted batches under the token budget;
// cancelling ctx stops the tokenizing, the batches and a run in progress.
func (e *Embedder) Embed(ctx context.Context, texts []string, isQuery bool) ([][]float32, error) {
	r, err := e.EmbedWith(ctx, texts, embed.Options{Query: isQuery})
	return r.Vectors, err
}

// finish checks a pooled vector, keeps its first Dim values and
// normalises it (in float64).
func (e *Embedder) finish(v []float32, dim int, raw bool) ([]float32, error) {
	if len(v) != e.modelDim {
		return nil, fmt.Errorf("%w: engine returned %d values, the model has %d", ErrDimension, len(v), e.modelDim)
	}
	v = v[:dim]
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := math.Sqrt(ss)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("%w: norm %v", ErrBadVector, n)
	}
	if raw {
		return slices.Clone(v), nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out, nil
}
