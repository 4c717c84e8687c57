// Package app is the one composition root of rerankd's servers: a typed
// Config (server, scheduler, model, memory, calibration, tuning) that
// Build turns into an App — backend (the neural model through the
// scheduler, or the lexical default), calibration, memory service, HTTP
// server and MCP server, each opened once. `rerankd serve` and `rerankd
// mcp` are flag-to-Config adapters over it, and the lab binary
// (rerankd-bench) builds its servers through it too, so what the lab
// measures is what serve runs. Flags and the environment are read in the
// commands, never here.
package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/serve"
)

// DefaultMCPNamespace is where memory tools called without a namespace go
// (rerankd mcp's --namespace default; always on serve's /mcp).
const DefaultMCPNamespace = "default"

// Config is everything Build composes a server from. Problems name the
// serve flag that sets the field (each field has one: see cmd/rerankd).
type Config struct {
	// Server is the HTTP front's limits, API keys and timeouts. Its /info
	// facts (Version, Engine, Template, Architecture, SupportedModels,
	// Runtime) are not settings: Build fills them from what it opened.
	Server serve.Config
	// KeyScopesFile is a JSON file {"KEY": ["namespace", "prefix*"]}
	// restricting keys to memory namespaces; its keys become API keys too.
	// "": none.
	KeyScopesFile string
	// Scheduler batches and queues the engine's calls. The scorer plans its
	// batches with the same limits, and /info reports them (Limits).
	Scheduler scheduler.Config
	// Model is the reranker: "" Model.Path serves the lexical default.
	Model ModelConfig
	// Memory is the memory API's store and indexes.
	Memory MemoryConfig
	// Embedding serves Memory.EmbedModel on /v1/embeddings and /embed:
	// its names and the queue it shares with the memory search. The
	// reranker's names are Server.RerankerNames ("": the hub id, the
	// folder's name, or lexical-bm25).
	Embedding EmbeddingConfig
	// Calibration is a file from eval calibrate: scores become calibrated
	// probabilities and its threshold applies when a request sends none.
	// "": raw scores.
	Calibration string
	// MCPNamespace is where memory tools called without a namespace go.
	MCPNamespace string
	// Version is reported by /info and MCP's serverInfo.
	Version string
	// Tuning holds the engine experiments and lab switches; users leave it
	// at its defaults.
	Tuning Tuning

	// Log receives the server's logs; nil discards them.
	Log *slog.Logger
	// Notices receives what a person starting the server reads (no
	// --model, downloads, the memory store opened); nil discards them.
	Notices io.Writer
	// Metrics is the Prometheus registry the server reports on; nil: a new one.
	Metrics *serve.Metrics
	// Tracer starts each API request's span; nil: none.
	Tracer trace.TracerProvider
}

// ModelConfig is the reranker and how ONNX Runtime runs it.
type ModelConfig struct {
	// ControlTokensInText lets special-token strings in user text act as
	// control tokens, as the Hugging Face reference (docs/special-tokens.md);
	// off by default.
	ControlTokensInText bool
	// Path is a model folder, or a Hugging Face repo id converted into
	// the cache on first use; "": the embedded lexical default.
	Path string
	// Quant is the weights to run: fp32, or a variant the folder has.
	Quant string
	// RuntimeLib is the ONNX Runtime shared library.
	RuntimeLib string
	// Tokenizer is used when the model folder has none.
	Tokenizer string
	// Provider is the execution provider: cpu, cuda or tensorrt.
	Provider string
	// Device is the GPU device id.
	Device int
	// CUDA is the cuda provider's settings (TF32 off by default).
	CUDA model.CUDAOptions
	// Threads is ONNX Runtime's intra-op threads (0: one per core).
	Threads int
	// MaxLength is the most tokens per prompt, template included.
	MaxLength int
	// PrefixCacheMB is the MiB of prefix keys/values the shared-prefix
	// engine keeps across requests (0: off).
	PrefixCacheMB int
	// CacheDir holds converted hub models and the session cache's "auto".
	CacheDir string
}

// Tuning is the engine's start-up and graph-form experiments (set from
// RERANKD_* variables or hidden serve flags, and by the lab) and the lab's
// switches that are no serve setting at all.
type Tuning struct {
	// SessionCache keeps the optimised session with its prepacked weights:
	// "auto" (under CacheDir), a folder, or "" (off).
	SessionCache string
	// Prefetch reads the weights the session maps while it builds.
	Prefetch bool
	// Prepack is auto, true or false: pack weights into the CPU kernels'
	// layout at start (auto: for quantised weights and a session cache).
	Prepack string
	// AttentionForm runs the folder's attention form of the shared-prefix
	// graph on the CPU where it has one.
	AttentionForm bool
	// NoSharedPrefix runs model.onnx instead of the shared-prefix graph
	// (the lab's before/after comparisons).
	NoSharedPrefix bool
	// NoSpinning makes intra-op threads block when idle (tune).
	NoSpinning bool
	// EncoderCallBound keeps a cross-encoder's CPU calls within the
	// engine's bound on their attention scores
	// (model.Options.EncoderScoresBytes); false leaves the token budget
	// (Scheduler.BatchTokens) alone to bound them, as when the user sets it.
	EncoderCallBound bool
	// EncoderTokenizer, when set, encodes an encoder folder's text instead
	// of the folder's tokenizer.json (tests), for the reranker and the
	// --embed-model alike.
	EncoderTokenizer model.EncoderTokenizer
}

// MemoryConfig is the memory API: its store, the embedder and the indexes.
type MemoryConfig struct {
	// Store is a bbolt file, a postgres:// URL or "none" (no memory API).
	Store string
	// EmbedModel is an embedding model folder for hybrid search ("": none).
	EmbedModel string
	// VectorDim is the dimension of client-supplied vectors (0: none, or
	// the embed model's).
	VectorDim int
	// Analyzer is how memory search splits CJK text (lexical.CJKMode).
	Analyzer string
	// SnapshotDir holds the vector index snapshots: "" next to a file
	// store, "none" for none.
	SnapshotDir string
	// SnapshotIdle re-saves a namespace's snapshot after writes have been
	// quiet this long (0: only after the build and at shutdown).
	SnapshotIdle time.Duration
	// Backfill embeds stored memories without a vector after start.
	Backfill bool
	// BackfillBatch is memories per embedding call of the back-fill.
	BackfillBatch int
	// IndexMemory bounds a shared store replica's in-memory indexes
	// (bytes, or with a unit; "" or "0": no bound).
	IndexMemory string
	// CatchUp, Poll, TombstoneRetention: the shared store's follower.
	CatchUp, Poll, TombstoneRetention time.Duration
}

// EmbeddingConfig names the served embedder and bounds its queue.
type EmbeddingConfig struct {
	// Names are the embedder's served names (empty: the hub id or the
	// folder's name); the first is the one responses carry.
	Names []string
	// Queue bounds the texts waiting or embedded at once (served requests
	// and the memory search together).
	Queue embed.QueueConfig
}

// DefaultConfig is serve's defaults: the lexical default model, the
// memory store under the data folder, the runtime files where
// scripts/setup.sh puts them.
func DefaultConfig() Config {
	def := retrieval.DefaultConfig()
	return Config{
		Server:    serve.DefaultConfig(),
		Scheduler: scheduler.DefaultConfig(),
		Model: ModelConfig{Quant: "fp32", RuntimeLib: paths.ORTLib(), Tokenizer: paths.Tokenizer(), Provider: "cpu",
			MaxLength: rerank.DefaultPromptConfig().MaxLength, PrefixCacheMB: model.DefaultPrefixCacheMB, CacheDir: paths.CacheDir()},
		Memory: MemoryConfig{Store: DefaultStorePath(), Analyzer: string(lexical.DefaultCJK), IndexMemory: "0",
			SnapshotIdle: def.Owner.SnapshotIdle, Backfill: def.Owner.Backfill, BackfillBatch: def.Owner.BackfillBatch,
			CatchUp: def.Follow.CatchUp, Poll: def.Follow.Poll, TombstoneRetention: def.Follow.TombstoneRetention},
		Embedding:    EmbeddingConfig{Queue: embed.DefaultQueueConfig()},
		MCPNamespace: DefaultMCPNamespace,
		Version:      "dev",
		Tuning:       Tuning{Prefetch: true, Prepack: "auto", AttentionForm: true, EncoderCallBound: true},
	}
}

// Validate reports every problem of c at once, each naming its flag; the
// error wraps cli.ErrUsage.
func (c Config) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(c.Server.Validate())
	add(c.Scheduler.Validate())
	add(c.Embedding.Queue.Validate())
	quant, err := onnx.ParseQuant(c.Model.Quant)
	if err != nil {
		add(fmt.Errorf("--quant: %w", err))
	}
	if c.Model.PrefixCacheMB < 0 {
		add(fmt.Errorf("--prefix-cache-mb %d: want >= 0 (0 turns the cache off)", c.Model.PrefixCacheMB))
	}
	if c.Model.MaxLength < 1 {
		add(fmt.Errorf("--max-length %d: want >= 1", c.Model.MaxLength))
	}
	if c.Model.Path == "" && err == nil && quant != onnx.QuantNone {
		add(fmt.Errorf("--quant %v needs --model (the lexical default has no weights)", quant))
	}
	if _, err := ResolvePrepack(c.Tuning.Prepack, quant, c.Tuning.SessionCache != ""); err != nil {
		add(err)
	}
	if err := memory.ValidateNamespace(c.MCPNamespace); err != nil {
		add(fmt.Errorf("--namespace: %w", err))
	}
	if _, err := c.Memory.retrieval(); err != nil {
		add(err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", cli.ErrUsage, errors.Join(errs...))
}

// Limits is /info's account of the batching limits, from the scheduler
// configuration: the one place both read them.
func (c Config) Limits() serve.Limits {
	return serve.Limits{QueueSize: c.Scheduler.QueueSize, BatchTokens: c.Scheduler.BatchTokens, MaxBatch: c.Scheduler.MaxBatch}
}

// scorerPlan sets the scorer's batch planning from the scheduler
// configuration, so that the scorer plans as the scheduler does.
func (c Config) scorerPlan(o *model.Options) {
	o.Scorer.Prompt.MaxLength = c.Model.MaxLength
	o.Scorer.Prompt.ControlTokensInText = c.Model.ControlTokensInText
	o.ControlTokensInText = c.Model.ControlTokensInText // cross-encoder pairs
	o.Scorer.BatchTokens = max(c.Scheduler.BatchTokens, c.Model.MaxLength)
	o.Scorer.MaxBatch, o.Scorer.MaxPadRatio = c.Scheduler.MaxBatch, c.Scheduler.MaxPadRatio
}
