package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/calibrate"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/serve"
	"github.com/rerankd/rerankd/tracing"
)

// serveFlags are `rerankd serve`'s settings. Every flag can also be set by
// the environment variable RERANKD_<NAME> (upper case, '-' as '_'); a flag
// on the command line wins.
type serveFlags struct {
	addr, modelArg, apiKeys, ortLib, tok, logLevel       string
	keyScopes, calibration, quant, sessionCache, prepack string
	threads, maxLength, prefixCacheMB                    int
	dev                                                  *device.Flags
	prefetch, attentionForm                              bool
	server                                               serve.Config
	sched                                                scheduler.Config
	memory                                               *memoryFlags

	// noSharedPrefix is no serve flag: loadtest's --no-shared-prefix runs
	// model.onnx instead of the shared-prefix graph, for before/after
	// comparisons, in the otherwise served composition.
	noSharedPrefix bool
	// noSpinning is no serve flag either: tune compares intra-op threads
	// that block when idle with serve's spinning ones.
	noSpinning bool
	// encoderTokenizer is no serve flag: tests set it to encode an encoder
	// folder's text (model.LoadOptions.EncoderTokenizer) instead of the
	// folder's tokenizer.json.
	encoderTokenizer model.EncoderTokenizer
}

// serveEnvHelp ends serve -h: the variables that are not flags.
const serveEnvHelp = `
Environment: every flag also reads RERANKD_<FLAG> (e.g. RERANKD_MAX_DOCUMENTS); a flag wins.
Tracing (OpenTelemetry, off unless configured): OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_TRACES_EXPORTER=otlp) turns it on;
OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf (default) or grpc; OTEL_SERVICE_NAME,
OTEL_TRACES_SAMPLER and the exporter's other OTEL_EXPORTER_OTLP_* variables apply.
`

func defineServeFlags(fs *flag.FlagSet) *serveFlags {
	f := &serveFlags{server: serve.DefaultConfig(), sched: scheduler.DefaultConfig()}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address host:port")
	fs.StringVar(&f.modelArg, "model", "", "model folder, or a Hugging Face repo id converted on first use; empty: the embedded lexical default")
	fs.StringVar(&f.apiKeys, "api-key", "", "comma-separated API keys required as 'Authorization: Bearer KEY', each at least 8 characters (empty: no auth)")
	fs.StringVar(&f.calibration, "calibration", "", "calibration file from `eval calibrate`: scores become calibrated probabilities, and its threshold applies when a request sends none")
	fs.StringVar(&f.keyScopes, "key-scopes", "", `JSON file {"KEY": ["namespace", "prefix*"], ...} restricting keys to memory namespaces (its keys are API keys too)`)
	fs.StringVar(&f.ortLib, "ort-lib", defaultORTLib(), "ONNX Runtime shared library (also ORT_LIB)")
	fs.StringVar(&f.tok, "tokenizer", defaultTokenizer(), "tokenizer used when the model folder has none")
	fs.StringVar(&f.quant, "quant", "fp32", "weights to run: fp32, or a quantised variant the folder has: int8 (faster on CPU), int8-block32 (~5x less error, slower; docs/int8-precision.md), ... "+
		"Measure the error on your model and texts with `rerankd quant-check` first")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	f.dev = device.Define(fs)
	fs.IntVar(&f.threads, "threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	fs.StringVar(&f.sessionCache, "session-cache", "", "keep the optimised ONNX Runtime session with its prepacked weights: 'auto' (under the cache folder), a folder, or '' (off). "+
		"The first start writes it (slower; about 1.5x the weights on disk), later starts on this machine load in about half the time, with bit-identical scores")
	fs.BoolVar(&f.prefetch, "prefetch", true, "read the weights the session maps (embedding table left out) in large requests while it builds: a first start, with the files not in the page cache, "+
		"reads them alongside the CPU work and before the first request instead of one page fault at a time (docs/first-start.md)")
	fs.StringVar(&f.prepack, "prepack", "auto", "pack weights into the CPU kernels' layout once at start: true, false, or auto: false for float32 (packing a 0.6B model's 1.8 GB took most of a 4-11 s start and "+
		"gained requests nothing measurable here), true for quantised weights (int8 ran 0.89x as fast unpacked) and with --session-cache (which stores the packed weights); docs/first-start.md")
	fs.BoolVar(&f.attentionForm, "attention-form", true, "on the CPU, run the folder's attention form of the shared-prefix graph where it has one (written by testmodel/convert: "+
		"the same scores, ONNX's fused Attention kernel in every layer; 0.95x the time per request float32, 0.89x int8 here); false runs the standard-op form (docs/fused-attention.md)")
	fs.IntVar(&f.prefixCacheMB, "prefix-cache-mb", model.DefaultPrefixCacheMB, "MiB of prefix keys/values (system prompt, instruction, query) kept across requests by the shared-prefix engine; 0: off")
	fs.IntVar(&f.maxLength, "max-length", rerank.DefaultPromptConfig().MaxLength, "most tokens per prompt, template included; longer documents are cut (truncated: true). 1024 bounds latency on CPU; the model card scores up to 8192")
	fs.IntVar(&f.server.MaxDocuments, "max-documents", f.server.MaxDocuments, "documents per request (more: 422)")
	fs.IntVar(&f.server.MaxBodyBytes, "max-body-bytes", f.server.MaxBodyBytes, "request body limit (more: 413)")
	fs.IntVar(&f.server.MaxTokensPerDoc, "max-tokens-per-doc", f.server.MaxTokensPerDoc, "cut each document to this many tokens (0: no per-document cut; every prompt is still cut at --max-length; /info says which applies and why)")
	fs.DurationVar(&f.server.RequestTimeout, "request-timeout", f.server.RequestTimeout, "time limit per request")
	fs.IntVar(&f.sched.QueueSize, "queue-size", f.sched.QueueSize, "pairs waiting before requests get 429")
	fs.IntVar(&f.sched.BatchTokens, "batch-tokens", f.sched.BatchTokens, "token budget per engine call (padding counted)")
	fs.IntVar(&f.sched.MaxBatch, "max-batch", f.sched.MaxBatch, "pairs per engine call")
	fs.Float64Var(&f.sched.MaxPadRatio, "max-pad-ratio", f.sched.MaxPadRatio, "most computed tokens over real tokens in one engine call of a padding engine (cross-encoders, the plain graph): low on CPU, where padding is wasted work; raise it on a GPU (1: equal lengths only)")
	fs.DurationVar(&f.sched.MaxWait, "max-wait", f.sched.MaxWait, "how long a batch may wait to fill")
	fs.IntVar(&f.sched.Workers, "workers", f.sched.Workers, "concurrent engine calls")
	f.memory = defineMemoryFlags(fs)
	return f
}

// applyEnv fills flags not given on the command line from RERANKD_<NAME>
// (paths.ApplyFlagEnv).
func applyEnv(fs *flag.FlagSet) error { return paths.ApplyFlagEnv(fs) }

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := defineServeFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: rerankd serve [flags]")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), serveEnvHelp)
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := applyEnv(fs); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	f.ortLib = f.dev.ORTLib(f.ortLib) // the reranker's and the embedder's: one library per process
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %w", errUsage, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	f.server.Version = version
	f.server.SupportedModels = supportedModels()
	for _, k := range strings.Split(f.apiKeys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			f.server.APIKeys = append(f.server.APIKeys, k)
		}
	}
	if err := loadKeyScopes(f); err != nil {
		return err
	}
	if err := errors.Join(f.server.Validate(), f.sched.Validate()); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	tcfg := tracing.DefaultConfig()
	tcfg.ServiceVersion = version
	tcfg, err := tracing.FromEnv(tcfg, paths.LookupEnv)
	if err != nil {
		return fmt.Errorf("%w: tracing: %w", errUsage, err)
	}
	tp, err := tracing.Start(context.Background(), tcfg, log)
	if err != nil {
		return err
	}
	// Runs last: after Shutdown has drained requests, their spans are flushed.
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(fctx); err != nil {
			log.Warn("trace flush failed", "err", err)
		}
	}()
	if tp.Enabled() {
		f.server.Tracer = tp
		log.Info("tracing on", "protocol", tcfg.Protocol)
	}
	comp, err := composeServer(f, serve.NewMetrics(), log, stderr)
	if err != nil {
		return err
	}
	srv, backend := comp.srv, comp.backend
	f.memory.ortLib, f.memory.tokenizer, f.memory.threads = f.ortLib, f.tok, f.threads
	f.memory.encoderTokenizer = f.encoderTokenizer
	mem, closeMem, err := openMemory(f.memory, log, stderr)
	if err != nil {
		_ = backend.Close(context.Background())
		return err
	}
	// Runs after Shutdown has drained requests (defers run last-in first-out).
	defer closeMem()
	if mem != nil {
		srv.WithMemory(mem)
	}
	// The same tools `rerankd mcp` serves over stdio, on /mcp.
	ms, err := srv.NewMCP(serve.MCPOptions{Namespace: defaultMCPNamespace, Version: version})
	if err != nil {
		_ = backend.Close(context.Background())
		return err
	}
	srv.WithMCP(ms)
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		_ = backend.Close(context.Background())
		return fmt.Errorf("listen %s: %w", f.addr, err)
	}
	fmt.Fprintf(stdout, "rerankd %s serving %s (backend %s) on http://%s\n", version, backend.ModelID(), backend.Name(), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), f.server.RequestTimeout+5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// engineReason is /info's account of the engine defaults; the figures are
// from README's model runtime section (rerankd bench and tune, full-size
// random-weight model, 20-memory requests, a 2-core AVX-512 machine).
// engineReason and engineDocs are /info's account of the engine
// defaults: the decision in words, the measurements on the page named.
const (
	engineReason = "float32 by default: int8 is faster but moves scores, and how far on trained weights only " +
		"`rerankd quant-check` on your model and texts can tell; neither int8 layout is the recommended CPU default. " +
		"Float16 and bfloat16 are not offered (no faster than float32 on CPU in ONNX Runtime). One worker with one " +
		"thread per core gives the lowest latency at one client; with concurrent clients measure `rerankd tune` and " +
		"`rerankd loadtest` (more workers, fewer threads each). The scheduler budgets an engine call by what the " +
		"engine computes, so a request that fits --batch-tokens is one call."
	engineDocs = "docs/int8-precision.md"
)

// composition is what composeServer builds.
type composition struct {
	srv     *serve.Server
	backend serve.Backend
	// scorer is the neural backend's scorer (nil for the lexical default),
	// on the engine the server runs: loadtest scores with it directly to
	// measure what the server adds.
	scorer *rerank.Scorer
}

// composeServer builds the served composition from f: the backend
// (neural through the scheduler, or lexical), its calibration, and the
// HTTP server. serve, bench and the load tools all use it, so what they
// measure is what serve runs. The memory API is attached by the caller.
func composeServer(f *serveFlags, metrics *serve.Metrics, log *slog.Logger, stderr io.Writer) (composition, error) {
	f.server.Runtime = model.RuntimeVersion
	backend, scorer, limits, err := openBackend(f, metrics, log, stderr)
	if err != nil {
		return composition{}, err
	}
	if f.calibration != "" {
		cal, err := calibrate.Load(f.calibration)
		var cb *serve.Calibrated
		if err == nil {
			cb, err = serve.NewCalibrated(backend, cal)
		}
		if err != nil {
			_ = backend.Close(context.Background())
			return composition{}, fmt.Errorf("%w: --calibration %s: %w", errUsage, f.calibration, err)
		}
		backend = cb
		log.Info("calibration loaded", "method", cal.Method, "threshold", cal.Threshold, "rule", cal.Rule, "fitted_on", cal.Source.Pipeline)
	}
	srv, err := serve.New(f.server, backend, limits, metrics, log)
	if err != nil {
		_ = backend.Close(context.Background())
		return composition{}, err
	}
	return composition{srv: srv, backend: backend, scorer: scorer}, nil
}

// openBackend loads the neural model when --model is set, else the
// lexical default, and says how to get the neural model.
func openBackend(f *serveFlags, metrics *serve.Metrics, log *slog.Logger, stderr io.Writer) (serve.Backend, *rerank.Scorer, serve.Limits, error) {
	limits := serve.Limits{QueueSize: f.sched.QueueSize, BatchTokens: f.sched.BatchTokens, MaxBatch: f.sched.MaxBatch}
	quant, err := onnx.ParseQuant(f.quant)
	if err != nil {
		return nil, nil, limits, fmt.Errorf("%w: --quant: %w", errUsage, err)
	}
	if f.prefixCacheMB < 0 {
		return nil, nil, limits, fmt.Errorf("%w: --prefix-cache-mb %d: want >= 0 (0 turns the cache off)", errUsage, f.prefixCacheMB)
	}
	if f.modelArg == "" && quant != onnx.QuantNone {
		return nil, nil, limits, fmt.Errorf("%w: --quant %v needs --model (the lexical default has no weights)", errUsage, quant)
	}
	if f.modelArg == "" {
		fmt.Fprintln(stderr, "no --model: serving the embedded lexical default (BM25 over each request's documents; word overlap, not neural relevance).\n"+
			"For the neural reranker: rerankd serve --model Qwen/Qwen3-Reranker-0.6B (downloaded and converted on first use),\n"+
			"or --model DIR with a folder from `rerankd convert` / scripts/export_onnx.py.")
		return serve.NewLexical(lexical.Default()), nil, serve.Limits{}, nil
	}
	prepack, err := resolvePrepack(f.prepack, quant, f.sessionCache != "")
	if err != nil {
		return nil, nil, limits, fmt.Errorf("%w: %w", errUsage, err)
	}
	dir, err := resolveModel(f.modelArg, f.tok, quant, stderr)
	if err != nil {
		return nil, nil, limits, err
	}
	o := model.DefaultOptions()
	o.Quant, o.PrefixCacheMB, o.NoSharedPrefix, o.StandardAttention = quant, f.prefixCacheMB, f.noSharedPrefix, !f.attentionForm
	o.RuntimeLib, o.Tokenizer, o.EncoderTokenizer = f.ortLib, f.tok, f.encoderTokenizer
	f.dev.Apply(&o.Session)
	o.Session.IntraOpThreads = f.threads
	o.Session.SessionCacheDir = f.sessionCache
	o.Session.Prefetch, o.Session.DisablePrepacking = f.prefetch, !prepack
	o.Session.Spinning = o.Session.Spinning && !f.noSpinning
	if f.sessionCache == "auto" {
		o.Session.SessionCacheDir = filepath.Join(cacheDir(), "sessions")
	}
	o.Scorer.Prompt.MaxLength = f.maxLength
	o.Scorer.BatchTokens = max(f.sched.BatchTokens, f.maxLength)
	o.Scorer.MaxBatch, o.Scorer.MaxPadRatio = f.sched.MaxBatch, f.sched.MaxPadRatio // the scorer plans as the scheduler does
	if err := o.Validate(); err != nil {
		return nil, nil, limits, fmt.Errorf("%w: %w", errUsage, err)
	}
	scorer, info, err := model.Open(dir, o)
	if err != nil {
		return nil, nil, limits, err
	}
	sched, err := scheduler.New(scorer.Engine(), f.sched, metrics)
	if err != nil {
		_ = scorer.Close()
		return nil, nil, limits, err
	}
	if ps, ok := scorer.Engine().(*model.PrefixSession); ok && info.PrefixCache {
		metrics.WatchPrefixCache(func() rerank.PrefixCacheStats { st, _ := ps.CacheStats(); return st })
	}
	threads := f.threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	f.server.Engine = &api.EngineInfo{Quant: quant.String(), Threads: threads, Workers: f.sched.Workers, SharedPrefix: info.SharedPrefix,
		PrefixCacheMB: f.prefixCacheMB, FusedAttention: info.FusedAttention, SessionCache: o.Session.SessionCacheDir != "",
		Prepacked: prepack, Prefetch: f.prefetch, Provider: string(o.Session.Provider), Device: o.Session.DeviceID, Reason: engineReason, Docs: engineDocs}
	maxLen := f.maxLength
	if info.Encoder != nil { // a cross-encoder: no template; pairs cut at the model's positions
		maxLen = info.MaxLength
		f.server.Architecture = strings.Join(info.Encoder.Architectures, ",")
	} else {
		f.server.Template = templateInfo(scorer.Template(), info)
	}
	log.Info("model loaded", "dir", dir, "output", info.Output.String(), "runtime", info.Runtime,
		"shared_prefix", info.SharedPrefix, "fused_attention", info.FusedAttention, "prefix_cache", info.PrefixCache, "weights", info.Quant.String(),
		"prepacked", prepack, "prefetch", f.prefetch, "tokenizer_ms", info.TokenizerLoad.Milliseconds(), "session_ms", info.SessionLoad.Milliseconds())
	return serve.NewNeural(f.modelArg, scorer, sched, maxLen), scorer, limits, nil
}

// resolvePrepack reads --prepack: auto packs quantised weights and a
// session-cache entry's (the cache exists to store packed weights), not
// float32 ones, whose packing costs most of a start and gained requests
// nothing measurable (docs/first-start.md).
func resolvePrepack(v string, q onnx.Quant, sessionCache bool) (bool, error) {
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

// resolveModel returns a model folder: the argument itself, or the
// converted copy of a hub repo in the cache (converted on first use, with
// the int8 variant and q's).
func resolveModel(arg, tok string, q onnx.Quant, stderr io.Writer) (string, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return arg, nil
	}
	if err := hf.ValidateRepoID(arg); err != nil {
		return "", fmt.Errorf("%w: --model %q is neither a folder nor a repo id: %w", errUsage, arg, err)
	}
	out := filepath.Join(cacheDir(), "models", strings.ReplaceAll(arg, "/", "--"))
	if _, err := os.Stat(filepath.Join(out, "model.onnx")); err == nil {
		return out, nil
	}
	src, err := download(arg, "main", stderr)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "converting %s to %s\n", src, out)
	quants := []onnx.Quant{onnx.QuantInt8}
	if q != onnx.QuantNone && q != onnx.QuantInt8 {
		quants = append(quants, q)
	}
	return out, folder.Convert(src, out, folder.BuildOptions{Tokenizer: tok, Quants: quants})
}

// loadKeyScopes reads --key-scopes: each key in it becomes an API key
// restricted to its namespaces.
func loadKeyScopes(f *serveFlags) error {
	if f.keyScopes == "" {
		return nil
	}
	raw, err := os.ReadFile(f.keyScopes)
	if err != nil {
		return fmt.Errorf("%w: --key-scopes: %w", errUsage, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var scopes map[string][]string
	if err := dec.Decode(&scopes); err != nil {
		return fmt.Errorf("%w: --key-scopes %s: want a JSON object of key → list of namespace patterns: %w", errUsage, f.keyScopes, err)
	}
	f.server.KeyScopes = scopes
	for k := range scopes {
		if !slices.Contains(f.server.APIKeys, k) {
			f.server.APIKeys = append(f.server.APIKeys, k)
		}
	}
	return nil
}

// templateInfo is the template /info reports, with the answer ids in use.
func templateInfo(t rerank.Template, info model.Info) *api.TemplateInfo {
	return &api.TemplateInfo{Name: t.Name, Source: t.Source, Prefix: t.Prefix, Instruction: t.Instruction, Query: t.Query,
		Document: t.Document, Suffix: t.Suffix, DefaultInstruction: t.DefaultInstruction, YesToken: t.YesToken, NoToken: t.NoToken,
		YesID: info.YesID, NoID: info.NoID}
}
