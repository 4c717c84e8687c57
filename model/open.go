package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/tokenizer"
)

// EngineKind selects how a model folder is run.
type EngineKind string

// Engines.
const (
	EngineONNX      EngineKind = "onnx"      // ONNX Runtime (default)
	EngineReference EngineKind = "reference" // plain-Go pass over the same weights
)

// LoadOptions are what opening any model folder needs, reranker or
// embedder alike: one type, so the two cannot drift apart in defaults or
// in what they accept.
type LoadOptions struct {
	// Engine is onnx (default) or reference.
	Engine EngineKind
	// RuntimeLib is the ONNX Runtime shared library (onnx engine).
	RuntimeLib string
	// Session configures ONNX Runtime (threads, provider).
	Session SessionConfig
	// Tokenizer is used when the folder has no tokenizer.json (community
	// exports often ship the ONNX file alone): a tokenizer.json, or a
	// folder holding one.
	Tokenizer string
	// LoadedTokenizer, when set, is used instead of reading one; it must
	// be the folder's (or Tokenizer's) tokenizer, which must still exist:
	// the embedder reads its post-processor from the file. Without it the
	// file is read through tokenizer.Shared, so a process parses each
	// distinct tokenizer.json once.
	LoadedTokenizer *tokenizer.Tokenizer
	// EncoderTokenizer, when set, encodes the text of an encoder folder
	// (BERT, XLM-R) instead of the folder's tokenizer.json; Tokenizer and
	// LoadedTokenizer are never used for one.
	EncoderTokenizer EncoderTokenizer
	// ControlTokensInText lets special-token strings in user text (a
	// cross-encoder's query and documents, an embedding model's inputs:
	// "</s>", "[SEP]", "<|endoftext|>") act as the control tokens they
	// name, as the Hugging Face reference encodes by default. Off (the
	// default) they are plain text (docs/special-tokens.md). The Qwen
	// reranker prompts take rerank.PromptConfig.ControlTokensInText.
	ControlTokensInText bool
}

// DefaultLoadOptions returns the defaults; RuntimeLib must still be set for
// the onnx engine.
func DefaultLoadOptions() LoadOptions {
	return LoadOptions{Engine: EngineONNX, Session: DefaultSessionConfig()}
}

// Validate reports every problem at once.
func (o LoadOptions) Validate() error {
	errs := []error{o.Session.Validate()}
	switch o.Engine {
	case EngineONNX:
		if o.RuntimeLib == "" {
			errs = append(errs, errors.New("onnx engine needs the ONNX Runtime library path"))
		}
	case EngineReference:
	default:
		errs = append(errs, fmt.Errorf("engine %q: want onnx or reference", o.Engine))
	}
	return errors.Join(errs...)
}

// Options configure Open.
type Options struct {
	LoadOptions
	// Scorer configures prompts and batching.
	Scorer rerank.ScorerConfig
	// NoSharedPrefix runs model.onnx even when the folder has the
	// shared-prefix graph (onnx.SharedPrefixFile), which is otherwise used
	// instead: same scores (within 1e-5), the request's shared prefix
	// computed once. Benchmarks set it to measure the plain path.
	NoSharedPrefix bool
	// StandardAttention runs the shared-prefix graph's standard-op form on
	// the CPU too. By default the CPU engine runs the folder's attention
	// form (onnx.AttentionFormFile) where it has one: the same scores
	// (within 1e-5), ONNX's fused Attention kernel in every layer. Other
	// execution providers always run the standard-op form.
	StandardAttention bool
	// Quant selects the folder's graphs with weights stored that way
	// (onnx.QuantFile: model.int8.onnx, shared_prefix.int8.onnx); the
	// default, onnx.QuantNone, runs the float32 graphs. A folder without the
	// asked-for variant is an error, never a silent fallback. The reference
	// engine is float32 only.
	Quant onnx.Quant
	// PrefixCacheMB bounds the shared-prefix engine's cross-request cache
	// of prefix keys/values (PrefixSession), in MiB; 0 turns it off. A
	// Qwen3-0.6B prefix costs ~0.23 MB per token, so the default 64 keeps
	// about four 70-token prefixes (system prompt + instruction + query).
	PrefixCacheMB int
	// EncoderScoresBytes bounds the attention scores one cross-encoder
	// call holds on the CPU: rows × heads × longest row² float32s. The
	// engine (EncoderEngine, a batching.CallBounder) then lets calls of
	// long pairs carry fewer rows, while short pairs still batch up to
	// Scorer's token budget; ONNX Runtime's arena keeps what its largest
	// call needed, so this bounds the memory a server grows to. A single
	// pair runs whatever its size. 0: no bound (the token budget only);
	// other execution providers take none. docs/perf/encoders-memory.md
	// measures it.
	EncoderScoresBytes int64
}

// DefaultPrefixCacheMB is Options.PrefixCacheMB's default.
const DefaultPrefixCacheMB = 64

// DefaultEncoderScoresBytes is Options.EncoderScoresBytes's default.
const DefaultEncoderScoresBytes = 6 << 20

// DefaultOptions returns the defaults; RuntimeLib must still be set for the
// onnx engine.
func DefaultOptions() Options {
	return Options{LoadOptions: DefaultLoadOptions(), Scorer: rerank.DefaultScorerConfig(), PrefixCacheMB: DefaultPrefixCacheMB,
		EncoderScoresBytes: DefaultEncoderScoresBytes}
}

// Validate reports every problem at once.
func (o Options) Validate() error {
	errs := []error{o.LoadOptions.Validate(), o.Scorer.Validate()}
	if o.PrefixCacheMB < 0 {
		errs = append(errs, fmt.Errorf("prefix cache %d MiB: want >= 0 (0 turns it off)", o.PrefixCacheMB))
	}
	if o.EncoderScoresBytes < 0 {
		errs = append(errs, fmt.Errorf("encoder scores bound %d bytes: want >= 0 (0: none)", o.EncoderScoresBytes))
	}
	if o.Engine == EngineReference && o.Quant != onnx.QuantNone {
		errs = append(errs, fmt.Errorf("the reference engine runs float32 weights only, not %v", o.Quant))
	}
	return errors.Join(errs...)
}

// Info describes an opened model.
type Info struct {
	Dir         string
	Engine      EngineKind
	Output      OutputKind   // onnx engine: the detected output layout
	Config      *arch.Config // from config.json, when present
	YesID, NoID int
	PadID       int
	Runtime     string // ONNX Runtime version (onnx engine)
	// SharedPrefix: the onnx engine runs onnx.SharedPrefixFile (see
	// PrefixSession) instead of model.onnx.
	SharedPrefix bool
	// FusedAttention: the shared-prefix graph running is the attention
	// form (Options.StandardAttention).
	FusedAttention bool
	// PrefixCache: the shared-prefix engine keeps prefix K/V across
	// requests (Options.PrefixCacheMB > 0 and a graph that supports it).
	PrefixCache bool
	// Quant is how the running graph stores its weights.
	Quant onnx.Quant
	// Template is the prompt template in use (the folder's, folder.LoadTemplate).
	Template rerank.Template
	// TokenizerLoad and SessionLoad are how long Open spent loading the
	// tokenizer and building the runtime session (concurrently, for the
	// shared-prefix engine); what a start costs, for logs and benchmarks.
	TokenizerLoad, SessionLoad time.Duration
	// Encoder is the architecture of an encoder folder (a cross-encoder
	// has no Template, yes/no ids or shared prefix); nil for Qwen.
	Encoder *arch.EncoderConfig
	// MaxLength is the longest pair a cross-encoder scores: the asked-for
	// prompt length, lowered to the model's positions (0 for Qwen).
	MaxLength int
}

// Open loads a model folder: model.onnx (+ model.onnx.data), tokenizer.json
// and tokenizer_config.json, and config.json when present. A folder whose
// config.json is a BERT / XLM-R cross-encoder's (IsEncoderFolder) is run
// by an EncoderEngine under a pair scorer (rerank.NewPairScorer).
func Open(dir string, o Options) (*rerank.Scorer, Info, error) {
	if err := o.Validate(); err != nil {
		return nil, Info{}, err
	}
	info := Info{Dir: dir, Engine: o.Engine, Quant: o.Quant}
	modelPath := filepath.Join(dir, onnx.QuantFile(onnx.ModelFile, o.Quant))
	if _, err := os.Stat(modelPath); err != nil {
		if o.Quant != onnx.QuantNone && errors.Is(err, os.ErrNotExist) {
			return nil, info, fmt.Errorf("model folder %s has no %v variant (%s): write it with `rerankd convert --quant %v` or `rerankd-bench testmodel --quant %v`",
				dir, o.Quant, filepath.Base(modelPath), o.Quant, o.Quant)
		}
		return nil, info, fmt.Errorf("model folder %s: %w", dir, err)
	}
	if enc, err := IsEncoderFolder(dir); err != nil {
		return nil, info, err
	} else if enc {
		return openEncoderScorer(dir, o, info)
	}
	tmpl, err := folder.LoadTemplate(dir)
	if err != nil {
		return nil, info, err
	}
	info.Template = tmpl
	if o.Scorer.Prompt.Template == nil {
		o.Scorer.Prompt.Template = &tmpl
	}
	// The tokenizer loads while the runtime builds the shared-prefix
	// session, which needs no token ids; the plain session needs the yes/no
	// ids first.
	type loaded struct {
		tok          *tokenizer.Tokenizer
		yes, no, pad int
		took         time.Duration
		err          error
	}
	tokc := make(chan loaded, 1)
	go func() {
		t0 := time.Now()
		var l loaded
		l.tok, _, l.err = resolveTokenizer(dir, o.LoadOptions)
		if l.err == nil {
			l.yes, l.no, l.pad, l.err = specialIDs(l.tok, tmpl)
		}
		l.took = time.Since(t0)
		tokc <- l
	}()
	var tok *tokenizer.Tokenizer
	var tokErr error
	waited := false
	waitTok := func() error { // once: later calls repeat the answer
		if !waited {
			l := <-tokc
			waited, tok, tokErr = true, l.tok, l.err
			info.YesID, info.NoID, info.PadID, info.TokenizerLoad = l.yes, l.no, l.pad, l.took
		}
		return tokErr
	}
	// Information only: the graph fixes the computation.
	if c, err := arch.ReadConfigInfo(filepath.Join(dir, "config.json")); err == nil {
		info.Config = &c
	} else if !errors.Is(err, os.ErrNotExist) {
		_ = waitTok()
		return nil, info, err
	}
	t0 := time.Now()
	var engine rerank.Engine
	switch o.Engine {
	case EngineReference:
		m, err := onnx.Load(dir)
		if err != nil {
			_ = waitTok()
			return nil, info, err
		}
		w, head, err := m.Weights()
		if err != nil {
			_ = waitTok()
			return nil, info, err
		}
		engine = NewReferenceEngine(w, head)
	default:
		if err := InitRuntime(o.RuntimeLib); err != nil {
			_ = waitTok()
			return nil, info, err
		}
		prefixPath := filepath.Join(dir, onnx.QuantFile(onnx.SharedPrefixFile, o.Quant))
		cpu, fused := o.Session.Provider == ProviderCPU || o.Session.Provider == "", false
		if p := onnx.AttentionFormFile(prefixPath); cpu && !o.StandardAttention && !o.NoSharedPrefix {
			if _, err := os.Stat(p); err == nil {
				prefixPath, fused = p, true
			}
		}
		if _, err := os.Stat(prefixPath); err == nil && !o.NoSharedPrefix {
			s, err := OpenPrefixSession(prefixPath, o.Session, int64(o.PrefixCacheMB)<<20)
			if err != nil {
				_ = waitTok()
				return nil, info, err
			}
			info.Output, info.Runtime, info.SharedPrefix, info.FusedAttention = OutputLogit, RuntimeVersion(), true, fused
			_, info.PrefixCache = s.CacheStats()
			engine = s
			break
		}
		if err := waitTok(); err != nil {
			return nil, info, err
		}
		t0 = time.Now() // the session alone, after the tokenizer
		s, err := OpenSession(modelPath, SessionSpec{YesID: info.YesID, NoID: info.NoID, PadID: info.PadID}, o.Session)
		if err != nil {
			return nil, info, err
		}
		info.Output, info.Runtime = s.Kind(), RuntimeVersion()
		engine = s
	}
	info.SessionLoad = time.Since(t0)
	if err := waitTok(); err != nil {
		_ = engine.Close()
		return nil, info, err
	}
	sc, err := rerank.NewScorer(tok, engine, o.Scorer)
	if err != nil {
		_ = engine.Close()
		return nil, info, err
	}
	return sc, info, nil
}

// tokenizerPath is the tokenizer.json a model folder runs with: its own,
// else fallback (a file, or a folder holding one). The path itself is
// returned, not only the tokenizer, because the embedder reads the
// post-processor from the same file.
func tokenizerPath(dir, fallback string) (string, error) {
	path := filepath.Join(dir, tokenizer.FileName)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if fallback == "" {
		return "", fmt.Errorf("model folder %s has no %s and no tokenizer was given", dir, tokenizer.FileName)
	}
	if st, err := os.Stat(fallback); err == nil && st.IsDir() {
		return filepath.Join(fallback, tokenizer.FileName), nil
	}
	return fallback, nil
}

// resolveTokenizer returns the tokenizer Open and OpenEmbedder run with
// and the file it comes from: o.LoadedTokenizer when set, else the file
// tokenizerPath picks, read through tokenizer.Shared.
func resolveTokenizer(dir string, o LoadOptions) (*tokenizer.Tokenizer, string, error) {
	path, err := tokenizerPath(dir, o.Tokenizer)
	if err != nil {
		return nil, "", err
	}
	if o.LoadedTokenizer != nil {
		return o.LoadedTokenizer, path, nil
	}
	tok, err := tokenizer.Shared(path)
	if err != nil {
		return nil, "", err
	}
	return tok, path, nil
}

// padID is the id written into padding positions. They are masked out,
// so any id in the vocabulary will do; the tokenizer's own pad or end
// token is preferred so that dumps of the inputs read naturally.
func padID(tok *tokenizer.Tokenizer) int {
	switch {
	case tok.Pad().Set:
		return tok.Pad().ID
	case tok.EOS().Set:
		return tok.EOS().ID
	}
	id, _ := tok.TokenID(folder.EndOfText)
	return id
}

// specialIDs reads the ids the runtime needs: the template's answer
// tokens (Qwen3-Reranker's "yes" and "no") and the padding token.
func specialIDs(tok *tokenizer.Tokenizer, t rerank.Template) (yes, no, pad int, err error) {
	yes, no, err = t.ScoreIDs(tok)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("template %s (%s): %w", t.Name, t.Source, err)
	}
	return yes, no, padID(tok), nil
}
