package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/scoring"
	"github.com/rerankd/rerankd/serve"
)

// App is a built server: every part opened once, closed by Close.
type App struct {
	// Server is the HTTP front, with the memory API and /mcp attached.
	Server *serve.Server
	// Backend scores /rerank: neural through the scheduler, or lexical,
	// with the calibration wrapped around it.
	Backend scoring.Backend
	// Scorer is the neural backend's scorer (nil for the lexical
	// default), on the engine the server runs: the lab scores with it
	// directly to measure what the server adds.
	Scorer *rerank.Scorer
	// Memory is the memory service (nil with --store none).
	Memory *retrieval.Service
	// Embedder is the queue in front of --embed-model, shared by the
	// memory search and the embedding routes (nil without one).
	Embedder *embed.Queue
	// MCP serves the memory and rerank tools (on /mcp, or over stdio).
	MCP *mcp.Server
	// Facts are what /info reports about the build.
	Facts Facts
	// Limits are the batching limits /info reports (zero for the lexical
	// default, which does not batch).
	Limits serve.Limits

	closeMemory   func()
	closeEmbedder func()
	backendClosed bool
}

// Facts are what Build learned opening the model, for /info.
type Facts struct {
	Engine          *api.EngineInfo
	Template        *api.TemplateInfo
	Architecture    string
	SupportedModels []api.ModelClass
	// ModelDir is the folder the model was loaded from ("" lexical).
	ModelDir string
	// ModelMaxLength and ModelMaxLengthFrom are a cross-encoder's own
	// input limit and its source (serve.Config's fields of those names).
	ModelMaxLength     int
	ModelMaxLengthFrom string
	// RandomWeights: the model folder carries the test-model generator's
	// random-weights marker (folder.RandomWeights).
	RandomWeights bool
}

// Build validates c and composes the server from it: the backend, its
// calibration, the HTTP server, the memory service and the MCP server. On
// an error everything opened so far is closed again.
func Build(c Config) (*App, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Notices == nil {
		c.Notices = io.Discard
	}
	if c.Metrics == nil {
		c.Metrics = serve.NewMetrics()
	}
	a := &App{closeMemory: func() {}, closeEmbedder: func() {}}
	if err := a.build(c); err != nil {
		_ = a.Close(context.Background())
		return nil, err
	}
	return a, nil
}

func (a *App) build(c Config) error {
	scfg := c.Server
	if err := keyScopes(&scfg, c.KeyScopesFile); err != nil {
		return err
	}
	if err := a.openBackend(c); err != nil {
		return err
	}
	if c.Calibration != "" {
		cal, err := calibrate.Load(c.Calibration)
		var cb *scoring.Calibrated
		if err == nil {
			err = errors.Join(cal.CheckModel(a.Backend.ModelID()), cal.Degenerate())
		}
		if err == nil {
			cb, err = scoring.NewCalibrated(a.Backend, cal)
		}
		if err == nil && cal.Source.Model == "" {
			c.Log.Warn("calibration file names no model: make sure it was fitted on this model's scores (eval calibrate now records it)", "file", c.Calibration)
		}
		if err != nil {
			return fmt.Errorf("%w: --calibration %s: %w", cli.ErrUsage, c.Calibration, err)
		}
		a.Backend = cb
		c.Log.Info("calibration loaded", "method", cal.Method, "threshold", cal.Threshold, "rule", cal.Rule, "fitted_on", cal.Source.Pipeline)
	}
	// /info's facts come from what was opened, here, in one place.
	scfg.Version, scfg.Tracer, scfg.Runtime = c.Version, c.Tracer, model.RuntimeVersion
	scfg.Engine, scfg.Template, scfg.Architecture, scfg.SupportedModels = a.Facts.Engine, a.Facts.Template, a.Facts.Architecture, a.Facts.SupportedModels
	scfg.ModelMaxLength, scfg.ModelMaxLengthFrom = a.Facts.ModelMaxLength, a.Facts.ModelMaxLengthFrom
	scfg.RandomWeights = a.Facts.RandomWeights
	scfg.RerankerNames = rerankerNames(c)
	srv, err := serve.New(scfg, a.Backend, a.Limits, c.Metrics, c.Log)
	if err != nil {
		return err
	}
	a.Server = srv
	if err := a.attachEmbedder(c); err != nil {
		return err
	}
	var shared retrieval.Embedder
	if a.Embedder != nil {
		shared = a.Embedder
	}
	// The one scorer, built above and handed down: /rerank scores with
	// a.Backend, and so does the memory service's rerank stage.
	rr := scoring.Reranking(a.Backend, scfg.MaxDocuments, scfg.MaxTokensPerDoc)
	mem, closeMem, err := openMemory(c, shared, rr, c.Log, c.Notices)
	if err != nil {
		return err
	}
	a.Memory, a.closeMemory = mem, closeMem
	if mem != nil {
		srv.WithMemory(mem)
	}
	ms, err := srv.NewMCP(serve.MCPOptions{Namespace: c.MCPNamespace, Version: c.Version})
	if err != nil {
		return err
	}
	a.MCP = ms
	return nil
}

// Shutdown stops the HTTP server, draining its requests (serve.Server's
// Shutdown, which closes the backend), then closes the memory service.
func (a *App) Shutdown(ctx context.Context) error {
	err := a.Server.Shutdown(ctx)
	a.backendClosed = true
	return errors.Join(err, a.Close(ctx))
}

// Close closes the memory service (saving its snapshots) and the backend
// unless Shutdown has. Call it for an App whose server never served, or
// after Shutdown; a second call does nothing.
func (a *App) Close(ctx context.Context) error {
	a.closeMemory()
	a.closeMemory = func() {}
	a.closeEmbedder() // after the memory search, which embeds through it
	a.closeEmbedder = func() {}
	if a.Backend == nil || a.backendClosed {
		return nil
	}
	a.backendClosed = true
	return a.Backend.Close(ctx)
}

// engineReason and engineDocs are /info's account of the engine
// defaults: the decision in words, the measurements on the page named.
const (
	engineReason = "float32 by default: int8 is faster but moves scores, and how far on trained weights only " +
		"rerankd-bench quant-check on your model and texts can tell; neither int8 layout is the recommended CPU default. " +
		"Float16 and bfloat16 are not offered (no faster than float32 on CPU in ONNX Runtime). One worker with one " +
		"thread per core gives the lowest latency at one client; with concurrent clients measure with rerankd-bench tune and " +
		"rerankd-bench loadtest (more workers, fewer threads each). The scheduler budgets an engine call by what the " +
		"engine computes, so a request that fits --batch-tokens is one call."
	engineDocs = "docs/perf/int8-precision.md"
)

// openBackend loads the neural model when a model is set, else the
// lexical default, and says how to get the neural model.
func (a *App) openBackend(c Config) error {
	a.Facts.SupportedModels = supportedModels()
	quant, _ := onnx.ParseQuant(c.Model.Quant) // Validate checked it
	if c.Model.Path == "" {
		fmt.Fprintln(c.Notices, "no --model: serving the embedded lexical default (BM25 over each request's documents; word overlap, not neural relevance).\n"+
			"For the neural reranker: rerankd serve --model Qwen/Qwen3-Reranker-0.6B (downloaded and converted on first use),\n"+
			"or --model DIR with a folder from rerankd convert or scripts/export_onnx.py.")
		a.Backend = scoring.NewLexical(lexical.Default())
		return nil
	}
	prepack, _ := ResolvePrepack(c.Tuning.Prepack, quant, c.Tuning.SessionCache != "") // Validate checked it
	dir, err := ResolveModel(c.Model.Path, c.Model.Tokenizer, c.Model.CacheDir, quant, c.Notices)
	if err != nil {
		return err
	}
	o := model.DefaultOptions()
	o.Quant, o.PrefixCacheMB, o.NoSharedPrefix, o.StandardAttention = quant, c.Model.PrefixCacheMB, c.Tuning.NoSharedPrefix, !c.Tuning.AttentionForm
	o.RuntimeLib, o.Tokenizer, o.EncoderTokenizer = c.Model.RuntimeLib, c.Model.Tokenizer, c.Tuning.EncoderTokenizer
	o.Session.Provider, o.Session.DeviceID, o.Session.IntraOpThreads = model.Provider(c.Model.Provider), c.Model.Device, c.Model.Threads
	o.Session.CUDA = c.Model.CUDA
	o.Session.SessionCacheDir = c.Tuning.SessionCache
	o.Session.Prefetch, o.Session.DisablePrepacking = c.Tuning.Prefetch, !prepack
	o.Session.Spinning = o.Session.Spinning && !c.Tuning.NoSpinning
	if c.Tuning.SessionCache == "auto" {
		o.Session.SessionCacheDir = filepath.Join(c.Model.CacheDir, "sessions")
	}
	c.scorerPlan(&o)
	if !c.Tuning.EncoderCallBound {
		o.EncoderScoresBytes = 0
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	scorer, info, err := model.Open(dir, o)
	if err != nil {
		return err
	}
	sched, err := scheduler.New(scorer.Engine(), c.Scheduler, c.Metrics)
	if err != nil {
		_ = scorer.Close()
		return err
	}
	if ps, ok := scorer.Engine().(*model.PrefixSession); ok && info.PrefixCache {
		c.Metrics.WatchPrefixCache(func() rerank.PrefixCacheStats { st, _ := ps.CacheStats(); return st })
	}
	threads := c.Model.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	a.Facts.ModelDir = dir
	random, err := folder.RandomWeights(dir)
	if err != nil {
		return err
	}
	if a.Facts.RandomWeights = random; random {
		c.Log.Warn(folder.RandomWeightsWarning, "model", dir)
		fmt.Fprintf(c.Notices, "rerankd serve: warning: --model %s: %s\n", dir, folder.RandomWeightsWarning)
	}
	cacheMB := c.Model.PrefixCacheMB
	if !info.PrefixCache {
		cacheMB = 0 // an engine without a prefix cache (cross-encoders, the plain graph) keeps none
	}
	a.Facts.Engine = &api.EngineInfo{Quant: quant.String(), Threads: threads, Workers: c.Scheduler.Workers, SharedPrefix: info.SharedPrefix,
		PrefixCacheMB: cacheMB, FusedAttention: info.FusedAttention, SessionCache: o.Session.SessionCacheDir != "",
		Prepacked: prepack, Prefetch: c.Tuning.Prefetch, Provider: string(o.Session.Provider), Device: o.Session.DeviceID, Reason: engineReason, Docs: engineDocs}
	maxLen := c.Model.MaxLength
	if info.Encoder != nil { // a cross-encoder: no template; pairs cut at the model's positions
		maxLen = info.MaxLength
		a.Facts.Architecture = strings.Join(info.Encoder.Architectures, ",")
		a.Facts.ModelMaxLength, a.Facts.ModelMaxLengthFrom = info.Encoder.MaxTokens(), encoderLimitFrom(*info.Encoder)
	} else {
		a.Facts.Template = templateInfo(scorer.Template(), info)
	}
	c.Log.Info("model loaded", "dir", dir, "output", info.Output.String(), "runtime", info.Runtime,
		"shared_prefix", info.SharedPrefix, "fused_attention", info.FusedAttention, "prefix_cache", info.PrefixCache, "weights", info.Quant.String(),
		"prepacked", prepack, "prefetch", c.Tuning.Prefetch, "tokenizer_ms", info.TokenizerLoad.Milliseconds(), "session_ms", info.SessionLoad.Milliseconds())
	a.Backend, a.Scorer, a.Limits = scoring.NewNeural(c.Model.Path, scorer, sched, maxLen), scorer, c.Limits()
	return nil
}

// encoderLimitFrom names where a cross-encoder's input limit comes from:
// its position embeddings, less XLM-R's offset (pad_token_id + 1).
func encoderLimitFrom(c arch.EncoderConfig) string {
	if off := c.PositionOffset(); off > 0 {
		return fmt.Sprintf("config.json max_position_embeddings %d, less the %d positions XLM-R reserves", c.MaxPositionEmbeddings, off)
	}
	return fmt.Sprintf("config.json max_position_embeddings %d", c.MaxPositionEmbeddings)
}

// ResolvePrepack reads the prepack setting: auto packs quantised weights
// and a session-cache entry's (the cache exists to store packed weights),
// not float32 ones, whose packing costs most of a start and gained
// requests nothing measurable (docs/perf/first-start.md).
func ResolvePrepack(v string, q onnx.Quant, sessionCache bool) (bool, error) {
	switch v {
	case "auto":
		return q != onnx.QuantNone || sessionCache, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		if sessionCache {
			return false, errors.New("--prepack=false with --session-cache: the cache stores packed weights; drop one of them")
		}
		return false, nil
	}
	return false, fmt.Errorf("--prepack %q: want auto, true or false", v)
}

// supportedModels is model.Classes for /info.
func supportedModels() []api.ModelClass {
	out := make([]api.ModelClass, len(model.Classes))
	for i, c := range model.Classes {
		out[i] = api.ModelClass{Architecture: c.Architecture, Kind: c.Kind, Examples: c.Examples}
	}
	return out
}

// ResolveModel returns a model folder: the argument itself, or the
// converted copy of a hub repo under cacheDir (converted on first use,
// with the int8 variant and q's).
func ResolveModel(arg, tok, cacheDir string, q onnx.Quant, notices io.Writer) (string, error) {
	st, err := os.Stat(arg)
	if err == nil && st.IsDir() {
		return arg, nil
	}
	if why, ok := MeantAsPath(arg); ok && os.IsNotExist(err) {
		return "", fmt.Errorf("%w: --model %q: no such folder (%s), so it is not taken as a hub repo id", cli.ErrUsage, arg, why)
	}
	if err := hf.ValidateRepoID(arg); err != nil {
		return "", fmt.Errorf("%w: --model %q is neither a folder nor a repo id: %w", cli.ErrUsage, arg, err)
	}
	out := filepath.Join(cacheDir, "models", strings.ReplaceAll(arg, "/", "--"))
	if _, err := os.Stat(filepath.Join(out, "model.onnx")); err == nil {
		return out, nil
	}
	src, err := Download(arg, "main", notices)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(notices, "converting %s to %s\n", src, out)
	quants := []onnx.Quant{onnx.QuantInt8}
	if q != onnx.QuantNone && q != onnx.QuantInt8 {
		quants = append(quants, q)
	}
	return out, folder.Convert(src, out, folder.BuildOptions{Tokenizer: tok, Quants: quants})
}

// keyScopes reads the key-scopes file into cfg: each key in it becomes
// an API key restricted to its namespaces.
func keyScopes(cfg *serve.Config, file string) error {
	if file == "" {
		return nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%w: --key-scopes: %w", cli.ErrUsage, err)
	}
	if n, dup := duplicateKey(raw); dup {
		return fmt.Errorf("%w: --key-scopes %s: entry %d repeats an earlier key (keys are secrets: not shown); give each key one list", cli.ErrUsage, file, n)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var scopes map[string][]string
	if err := dec.Decode(&scopes); err != nil {
		return fmt.Errorf("%w: --key-scopes %s: want a JSON object of key → list of namespace patterns: %w", cli.ErrUsage, file, err)
	}
	cfg.KeyScopes = scopes
	cfg.APIKeys = slices.Clone(cfg.APIKeys)
	for k := range scopes {
		if !slices.Contains(cfg.APIKeys, k) {
			cfg.APIKeys = append(cfg.APIKeys, k)
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	return nil
}

// templateInfo is the template /info reports, with the answer ids in use.
func templateInfo(t rerank.Template, info model.Info) *api.TemplateInfo {
	return &api.TemplateInfo{Name: t.Name, Source: t.Source, Prefix: t.Prefix, Instruction: t.Instruction, Query: t.Query,
		Document: t.Document, Suffix: t.Suffix, DefaultInstruction: t.DefaultInstruction, YesToken: t.YesToken, NoToken: t.NoToken,
		YesID: info.YesID, NoID: info.NoID}
}

// MeantAsPath reports whether a --model or --from value that is no folder
// was meant as a path (a mistyped folder must not become a download):
// it starts with "/", "./", "../" or "~", ends with "/", has more than
// one "/", or its first part is a folder here.
func MeantAsPath(arg string) (string, bool) {
	switch {
	case strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") || strings.HasPrefix(arg, "~"):
		return "it is written as a path", true
	case strings.HasSuffix(arg, "/") || strings.Count(arg, "/") > 1 || strings.ContainsRune(arg, '\\'):
		return "a repo id is owner/name", true
	}
	if first, _, ok := strings.Cut(arg, "/"); ok {
		if st, err := os.Stat(first); err == nil && st.IsDir() {
			return "the folder " + first + " exists here", true
		}
	}
	return "", false
}

// duplicateKey reports the entry (1-based) whose key appears twice in the
// top-level JSON object raw (encoding/json would keep the last list
// silently); a file that is not such an object is left to the decoder.
func duplicateKey(raw []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	seen := map[string]bool{}
	for n := 1; dec.More(); n++ {
		t, err := dec.Token()
		if err != nil {
			return 0, false
		}
		k, _ := t.(string)
		if seen[k] {
			return n, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, false
		}
	}
	return 0, false
}
