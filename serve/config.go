package serve

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rerankd/rerankd/api"
)

// Config holds the server's limits. Flags and environment are mapped onto
// it in cmd/rerankd; this package reads neither.
type Config struct {
	// MaxDocuments per request; more is a 422 (never silently skipped).
	MaxDocuments int
	// MaxBodyBytes bounds a request body; more is a 413.
	MaxBodyBytes int
	// MaxTokensPerDoc is the default cut of each document (a request may
	// ask for less with max_tokens_per_doc, never more). 0: no
	// per-document cut; a document is then cut only where the whole
	// prompt would pass the model's maximum length (rerankd serve
	// --max-length), and a request's max_tokens_per_doc applies alone.
	MaxTokensPerDoc int
	// RequestTimeout bounds one request from decode to answer.
	RequestTimeout time.Duration
	// APIKeys, when non-empty, are required as "Authorization: Bearer KEY"
	// on every endpoint but /health and /ready.
	APIKeys []string
	// KeyScopes restricts API keys to namespaces of the memory API: key →
	// patterns ("name", "prefix*", "*"). A key without an entry may use every
	// namespace. Each key here must be in APIKeys.
	KeyScopes map[string][]string
	// AllowedHosts are Host names (name, or name:port) accepted on a
	// loopback connection besides localhost, 127.0.0.1 and [::1]; "*"
	// accepts any (behind a proxy that checks them itself). See origin.go.
	AllowedHosts []string
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// send requests that change state or run MCP tools besides the server's
	// own pages; "*" allows any.
	AllowedOrigins []string
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
	// ReadTimeout bounds reading one request (slow clients are cut).
	ReadTimeout time.Duration
	// HealthProbeEvery is how long a successful /health probe is reused.
	HealthProbeEvery time.Duration
	// Version is reported by /info.
	Version string
	// Tracer starts each API request's span (see trace.go); nil: no spans.
	Tracer trace.TracerProvider
	// Engine, when set, is reported by /info as the neural engine's layout.
	Engine *api.EngineInfo
	// Template, when set, is reported by /info as the prompt template.
	Template *api.TemplateInfo
	// RandomWeights marks a reranker with random weights (the test model
	// generator's marker, folder.MarkerFile): /info says so loudly.
	RandomWeights bool
	// ModelMaxLength, when > 0, is the longest input the served model
	// itself takes (a cross-encoder's position embeddings) and
	// ModelMaxLengthFrom the file and field it comes from: /info then
	// says whether the backend's limit is the model's or the operator's,
	// and reports no model-card length (that figure is Qwen3-Reranker's).
	ModelMaxLength     int
	ModelMaxLengthFrom string
	// Architecture and SupportedModels are reported by /info: the served
	// model's class and those this build serves.
	Architecture    string
	SupportedModels []api.ModelClass
	// Runtime, when set, returns the inference runtime's version for /info
	// (cmd/rerankd passes ONNX Runtime's). It is called at each request,
	// so a runtime loaded after the server is built (by an embedding model
	// opened for the memory API) is reported too.
	Runtime func() string
	// RerankerNames are the names the reranker is served under (GET
	// /v1/models); the first is the model every rerank response names.
	// Empty: the backend's ModelID.
	RerankerNames []string
	// StrictModelName refuses a request whose "model" is none of the
	// served names (404 model_not_found, as vLLM does); off, such a
	// request is answered by the served model, which the response names.
	StrictModelName bool
	// MaxEmbedInputs bounds the inputs of one /v1/embeddings or /embed
	// request; more is refused (never silently dropped).
	MaxEmbedInputs int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{MaxDocuments: 1000, MaxBodyBytes: 8 << 20, MaxTokensPerDoc: DefaultMaxTokensPerDoc, RequestTimeout: 60 * time.Second,
		MaxHeaderBytes: 16 << 10, ReadTimeout: 30 * time.Second, HealthProbeEvery: 5 * time.Second, Version: "dev", MaxEmbedInputs: 1024}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(c.MaxDocuments >= 1, "max documents %d: want >= 1", c.MaxDocuments)
	check(c.MaxBodyBytes >= 1024, "max body bytes %d: want >= 1024", c.MaxBodyBytes)
	check(c.MaxTokensPerDoc >= 0, "max tokens per document %d: want >= 0 (0: no per-document cut)", c.MaxTokensPerDoc)
	check(c.RequestTimeout > 0, "request timeout %v: want > 0", c.RequestTimeout)
	check(c.MaxHeaderBytes >= 1024, "max header bytes %d: want >= 1024", c.MaxHeaderBytes)
	check(c.ReadTimeout > 0, "read timeout %v: want > 0", c.ReadTimeout)
	check(c.MaxEmbedInputs >= 1, "max embedding inputs %d: want >= 1", c.MaxEmbedInputs)
	errs = append(errs, checkNames("reranker", c.RerankerNames)...)
	check(c.HealthProbeEvery >= 0, "health probe interval %v: want >= 0", c.HealthProbeEvery)
	for _, p := range validateHostLists(c.AllowedHosts, c.AllowedOrigins) {
		errs = append(errs, errors.New(p))
	}
	errs = append(errs, validateScopes(c.APIKeys, c.KeyScopes)...)
	for i, k := range c.APIKeys {
		check(len(k) >= 8, "API key %d is shorter than 8 characters", i+1)
	}
	return errors.Join(errs...)
}

// RandomWeightsWarning is what /info's warnings say about a model whose
// folder carries the random-weights marker.
const RandomWeightsWarning = "RANDOM WEIGHTS: generated by rerankd-bench testmodel; its outputs mean nothing, never judge quality with it"
