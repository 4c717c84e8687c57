// Package servecmd is rerankd serve and rerankd mcp: flag-to-Config
// adapters over app.Build. The lab's tests start it as the rerankd they
// time.
package servecmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/version"
	"github.com/rerankd/rerankd/tracing"
)

// Flags are `rerankd serve`'s settings: app.Config, set from flags.
// Every flag can also be set by the environment variable RERANKD_<NAME>
// (upper case, '-' as '_'); a flag on the command line wins.
type Flags struct {
	Cfg                     app.Config
	Addr, apiKeys, logLevel string
	dev                     *device.Flags
}

// envHelp ends serve -h: the variables that are not flags.
const envHelp = `
Environment: every flag also reads RERANKD_<FLAG> (e.g. RERANKD_MAX_DOCUMENTS); a flag wins.
Tracing (OpenTelemetry, off unless configured): OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_TRACES_EXPORTER=otlp) turns it on;
OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf (default) or grpc; OTEL_SERVICE_NAME,
OTEL_TRACES_SAMPLER and the exporter's other OTEL_EXPORTER_OTLP_* variables apply.
All flags, with their variables: docs/user/configuration.md.
`

// Groups orders serve's (and mcp's) flags in their help. Groups
// marked More are listed by --help-all only: tuning that rarely needs a
// change, and the engine's start-up and graph-form experiments.
var Groups = []cli.FlagGroup{
	{Title: "Server", Flags: []string{"addr", "api-key", "key-scopes", "calibration", "log-level", "request-timeout", "max-documents", "max-tokens-per-doc"}},
	{Title: "Model", Flags: []string{"model", "quant", "provider", "device", "threads", "max-length"}},
	{Title: "Memory", Flags: []string{"store", "embed-model", "vector-dim", "analyzer", "snapshot-dir", "backfill"}},
	{Title: "Embeddings and model names", Note: "with --embed-model; docs/user/api.md", More: true, Flags: []string{"served-model-name", "embed-served-model-name", "strict-model-name", "max-embed-inputs", "embed-queue-size"}},
	{Title: "Shared store", Note: "with a postgres:// --store", Flags: []string{"index-memory", "catch-up", "tombstone-retention"}},
	{Title: "Advanced", Flags: []string{"workers", "queue-size", "batch-tokens", "max-batch", "prefix-cache-mb", "max-body-bytes"}},
	{Title: "Tuning", Note: "rarely changed", More: true, Flags: []string{"tokenizer", "ort-lib", "cuda-tf32", "gpu-mem-limit-mb", "cuda-arena-extend", "max-pad-ratio", "max-wait", "snapshot-idle", "backfill-batch", "follow-poll"}},
	{Title: "Guards", Note: "against web pages and prompt injection; the defaults are the safe choice (docs/user/guards.md)", More: true,
		Flags: []string{"allowed-hosts", "allowed-origins", "control-tokens-in-text"}},
	{Title: "Engine experiments", Note: "the defaults are the measured choice; docs/perf/", More: true, Flags: []string{"attention-form", "prepack", "prefetch", "session-cache"}},
}

// DefineFlags declares serve's flags (shared by mcp) on fs, each with its
// RERANKD_<FLAG> environment twin, and returns the Config they fill.
func DefineFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{Cfg: app.DefaultConfig()}
	c := &f.Cfg
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "listen address host:port")
	fs.StringVar(&f.apiKeys, "api-key", "", "comma-separated API keys required as 'Authorization: Bearer KEY', each at least 8 characters (empty: no auth)")
	fs.StringVar(&c.KeyScopesFile, "key-scopes", "", `JSON file {"KEY": ["namespace", "prefix*"], ...} restricting keys to memory namespaces (its keys are API keys too)`)
	fs.StringVar(&c.Calibration, "calibration", "", "calibration file written by 'eval calibrate': scores become calibrated probabilities, and its threshold applies when a request sends none")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.Server.RequestTimeout, "request-timeout", c.Server.RequestTimeout, "time limit per request")
	fs.IntVar(&c.Server.MaxDocuments, "max-documents", c.Server.MaxDocuments, "documents per request (more: 422)")
	fs.IntVar(&c.Server.MaxTokensPerDoc, "max-tokens-per-doc", c.Server.MaxTokensPerDoc, "cut each document to this many tokens (0: no per-document cut; every prompt is still cut at --max-length; /info says which applies and why)")
	fs.IntVar(&c.Server.MaxBodyBytes, "max-body-bytes", c.Server.MaxBodyBytes, "request body limit (more: 413)")

	defineGuardFlags(fs, &c.Server, &c.Model.ControlTokensInText)
	fs.StringVar(&c.Model.Path, "model", "", "model folder, or a Hugging Face repo id converted on first use; empty: the embedded lexical default")
	fs.StringVar(&c.Model.Quant, "quant", c.Model.Quant, "weights to run: fp32, or a quantised variant the folder has (int8, int8-block32, ...); int8 is faster on CPU but moves scores: "+
		"measure the error on your model and texts with 'rerankd-bench quant-check' first (docs/perf/int8-precision.md)")
	f.dev = device.Define(fs) // --provider, --device and the CUDA provider's settings
	fs.IntVar(&c.Model.Threads, "threads", 0, "ONNX Runtime intra-op threads (0: one per core)")
	fs.IntVar(&c.Model.MaxLength, "max-length", c.Model.MaxLength, "most tokens per prompt, template included; longer documents are cut (truncated: true). The default bounds latency on CPU; the model card scores up to 8192")
	fs.IntVar(&c.Model.PrefixCacheMB, "prefix-cache-mb", c.Model.PrefixCacheMB, "MiB of prefix keys/values (system prompt, instruction, query) kept across requests by the shared-prefix engine; 0: off")
	fs.StringVar(&c.Model.RuntimeLib, "ort-lib", c.Model.RuntimeLib, "ONNX Runtime shared library (also ORT_LIB)")
	fs.StringVar(&c.Model.Tokenizer, "tokenizer", c.Model.Tokenizer, "tokenizer used when the model folder has none")

	fs.IntVar(&c.Scheduler.Workers, "workers", c.Scheduler.Workers, "concurrent engine calls")
	fs.IntVar(&c.Scheduler.QueueSize, "queue-size", c.Scheduler.QueueSize, "pairs waiting before requests get 429")
	fs.IntVar(&c.Scheduler.BatchTokens, "batch-tokens", c.Scheduler.BatchTokens, "token budget per engine call (padding counted); on the CPU a cross-encoder's calls also stay within a bound on their attention scores unless this is given")
	fs.IntVar(&c.Scheduler.MaxBatch, "max-batch", c.Scheduler.MaxBatch, "pairs per engine call")
	fs.Float64Var(&c.Scheduler.MaxPadRatio, "max-pad-ratio", c.Scheduler.MaxPadRatio, "most computed tokens over real tokens in one engine call of a padding engine (cross-encoders, the plain graph): low on CPU, where padding is wasted work; raise it on a GPU (1: equal lengths only)")
	fs.DurationVar(&c.Scheduler.MaxWait, "max-wait", c.Scheduler.MaxWait, "how long a batch may wait to fill")

	fs.StringVar(&c.Tuning.SessionCache, "session-cache", "", "keep the optimised ONNX Runtime session with its prepacked weights: 'auto' (under the cache folder), a folder, or '' (off). "+
		"The first start writes it (slower, larger on disk), later starts on this machine load faster, with bit-identical scores (docs/perf/first-start.md)")
	fs.BoolVar(&c.Tuning.Prefetch, "prefetch", c.Tuning.Prefetch, "read the weights the session maps (embedding table left out) in large requests while it builds, instead of one page fault at a time (docs/perf/first-start.md)")
	fs.StringVar(&c.Tuning.Prepack, "prepack", c.Tuning.Prepack, "pack weights into the CPU kernels' layout once at start: true, false, or auto: true for quantised weights and with --session-cache, false for float32 (docs/perf/first-start.md)")
	fs.BoolVar(&c.Tuning.AttentionForm, "attention-form", c.Tuning.AttentionForm, "on the CPU, run the folder's attention form of the shared-prefix graph where it has one (the same scores, "+
		"ONNX's fused Attention kernel in every layer); false runs the standard-op form (docs/perf/fused-attention.md)")

	m := &c.Memory
	fs.StringVar(&m.Store, "store", m.Store, "memory store: a file (bbolt, this process alone), a postgres:// URL (PostgreSQL, shared by any number of replicas; the password may also come from PGPASSWORD or a passfile), or \"none\" (no memory API)")
	fs.StringVar(&m.IndexMemory, "index-memory", m.IndexMemory, "with a postgres:// store: bound on this replica's in-memory indexes (bytes, or with KiB/MiB/GiB/KB/MB/GB); least recently used namespaces are dropped and rebuilt on next use (0: no bound)")
	fs.DurationVar(&m.CatchUp, "catch-up", m.CatchUp, "with a postgres:// store: how long a search may wait for its namespace's indexes to reach every acknowledged write (a first build included) before answering 503 with Retry-After")
	fs.DurationVar(&m.TombstoneRetention, "tombstone-retention", m.TombstoneRetention, "with a postgres:// store: how long the records of deletes are kept for replicas to follow; older ones are purged hourly, and a replica further behind rebuilds the namespace (0: kept forever)")
	fs.DurationVar(&m.Poll, "follow-poll", m.Poll, "with a postgres:// store: how often to poll every namespace's change sequence (notifications usually come first)")
	fs.IntVar(&m.VectorDim, "vector-dim", 0, "dimension of client-supplied memory vectors (0: no vector index, or the --embed-model's)")
	fs.StringVar(&m.Analyzer, "analyzer", m.Analyzer, "how memory search splits Chinese, Japanese and Korean text into terms: "+app.CJKModeNames()+" (gse modes need a binary built with -tags gse; docs/user/memory.md)")
	fs.StringVar(&m.EmbedModel, "embed-model", "", "embedding model folder (Qwen3-Embedding, BGE-M3, ...): memories and queries are embedded for hybrid search")
	fs.StringVar(&m.SnapshotDir, "snapshot-dir", "", "directory of memory vector index snapshots, loaded at start instead of rebuilding (empty: STORE.snapshots next to --store; with a postgres:// store the snapshots live in the database; \"none\" disables)")
	fs.DurationVar(&m.SnapshotIdle, "snapshot-idle", m.SnapshotIdle, "re-save a namespace's vector index snapshot once its writes have been quiet this long (0: only after the start-up build and at shutdown)")
	fs.BoolVar(&m.Backfill, "backfill", m.Backfill, "with --embed-model, embed stored memories that have no vector (added before it was configured) in the background after start")
	fs.IntVar(&m.BackfillBatch, "backfill-batch", m.BackfillBatch, "memories per embedding call during the back-fill")

	// The embedding routes and the served model names.
	fs.Var((*nameList)(&c.Server.RerankerNames), "served-model-name", "comma-separated names the reranker (--model) is served under: GET /v1/models lists them and every rerank response carries the first (empty: the hub id, the model folder's name, or lexical-bm25 without --model)")
	fs.Var((*nameList)(&c.Embedding.Names), "embed-served-model-name", "comma-separated names the embedder (--embed-model) is served under on /v1/embeddings and /embed (empty: the hub id, or the model folder's name)")
	fs.BoolVar(&c.Server.StrictModelName, "strict-model-name", false, "refuse a request whose \"model\" is not a served name (404 model_not_found); off, the served model answers and the response names it")
	fs.IntVar(&c.Server.MaxEmbedInputs, "max-embed-inputs", c.Server.MaxEmbedInputs, "texts per /v1/embeddings or /embed request (more: 400/422)")
	fs.IntVar(&c.Embedding.Queue.QueueSize, "embed-queue-size", c.Embedding.Queue.QueueSize, "texts waiting or being embedded (served requests and the memory search together) before embedding requests get 429")
	return f
}

// nameList is a comma-separated list flag of served model names; blanks
// around a name are dropped, an empty name is kept for Validate to refuse.
type nameList []string

func (l *nameList) String() string { return strings.Join(*l, ",") }

func (l *nameList) Set(v string) error {
	*l = nil
	for _, n := range strings.Split(v, ",") {
		*l = append(*l, strings.TrimSpace(n))
	}
	return nil
}

// Parse parses serve's (or mcp's) command line and environment
// into f's Config and returns the logger --log-level asks for.
func Parse(fs *flag.FlagSet, f *Flags, args []string, stderr io.Writer) (*slog.Logger, error) {
	if err := cli.ParseGrouped(fs, args, stderr); err != nil {
		return nil, err
	}
	// A token budget the user chose bounds a cross-encoder's calls alone.
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "batch-tokens" {
			f.Cfg.Tuning.EncoderCallBound = false
		}
	})
	if _, ok := paths.LookupEnv(paths.FlagEnv("batch-tokens")); ok {
		f.Cfg.Tuning.EncoderCallBound = false
	}
	if err := paths.ApplyFlagEnv(fs); err != nil {
		return nil, fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	m := &f.Cfg.Model
	m.Provider, m.Device, m.CUDA = f.dev.Provider, f.dev.Device, f.dev.CUDA()
	m.RuntimeLib = f.dev.ORTLib(m.RuntimeLib) // a GPU provider: setup-gpu's CUDA build unless --ort-lib/ORT_LIB
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: --log-level: %w", cli.ErrUsage, err)
	}
	for _, k := range strings.Split(f.apiKeys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			f.Cfg.Server.APIKeys = append(f.Cfg.Server.APIKeys, k)
		}
	}
	f.Cfg.Version = version.String()
	f.Cfg.Notices = stderr
	f.Cfg.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	return f.Cfg.Log, nil
}

// RunServe implements rerankd serve: flags to app.Config, app.Build, then
// the HTTP server until SIGINT/SIGTERM drains it.
func RunServe(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := DefineFlags(fs)
	fs.Usage = cli.GroupedUsage(fs, "Usage: rerankd serve [flags]\n\nServes /rerank, the memory API and /mcp over HTTP.", Groups, envHelp)
	log, err := Parse(fs, f, args, stderr)
	if err != nil {
		return err
	}
	if err := f.Cfg.Validate(); err != nil {
		return err
	}
	tcfg := tracing.DefaultConfig()
	tcfg.ServiceVersion = f.Cfg.Version
	tcfg, err = tracing.FromEnv(tcfg, paths.LookupEnv)
	if err != nil {
		return fmt.Errorf("%w: tracing: %w", cli.ErrUsage, err)
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
		f.Cfg.Tracer = tp
		log.Info("tracing on", "protocol", tcfg.Protocol)
	}
	a, err := app.Build(f.Cfg)
	if err != nil {
		return err
	}
	// Runs after Shutdown has drained requests (defers run last-in first-out).
	defer func() { _ = a.Close(context.Background()) }()
	a.Server.WithMCP(a.MCP) // the tools `rerankd mcp` serves over stdio, on /mcp
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", f.Addr, err)
	}
	fmt.Fprintf(stdout, "rerankd %s serving %s (backend %s) on http://%s\n", f.Cfg.Version, a.Backend.ModelID(), a.Backend.Name(), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- a.Server.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), f.Cfg.Server.RequestTimeout+5*time.Second)
	defer cancel()
	return a.Shutdown(sctx)
}
