package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// RerankRequest is the body of POST /rerank in either style.
type RerankRequest struct {
	// Model is accepted for compatibility: the response names the model
	// that answered; a name the server does not serve is refused only under
	// its --strict-model-name.
	Model string `json:"model,omitempty"`
	// Query is required and must not be blank.
	Query string `json:"query"`
	// Documents (Cohere/Jina style): strings or objects with a "text" field.
	Documents []Document `json:"documents,omitempty"`
	// TopN keeps the best N results (after Threshold). Absent: all.
	TopN *int `json:"top_n,omitempty"`
	// ReturnDocuments echoes each result's document.
	ReturnDocuments bool `json:"return_documents,omitempty"`
	// MaxTokensPerDoc cuts each document to this many tokens (0: the server's limit).
	MaxTokensPerDoc int `json:"max_tokens_per_doc,omitempty"`

	// Instruction replaces the model's default task instruction.
	Instruction string `json:"instruction,omitempty"`
	// Context holds recent conversation turns, oldest first, placed before
	// the query so the model can resolve references in it.
	Context []string `json:"context,omitempty"`
	// Threshold drops results whose score (the probability, even when
	// RawScores is set) is below it. Applied before TopN, so fewer than TopN
	// results may come back.
	Threshold *float64 `json:"threshold,omitempty"`
	// RawScores returns logits (yes minus no) instead of probabilities.
	RawScores bool `json:"raw_scores,omitempty"`

	// Texts (text-embeddings-inference style) replaces Documents and makes
	// the answer a bare []TEIResult.
	Texts []string `json:"texts,omitempty"`
	// ReturnText echoes each text (TEI style).
	ReturnText bool `json:"return_text,omitempty"`
	// Truncate: absent or true cuts over-long texts; false makes an
	// over-long text an error (413) instead, as TEI does.
	Truncate *bool `json:"truncate,omitempty"`
	// TruncationDirection is "Right" (default: keep the start) or "Left".
	TruncationDirection string `json:"truncation_direction,omitempty"`
}

// TEIStyle reports whether the request uses "texts".
func (r *RerankRequest) TEIStyle() bool { return r.Texts != nil }

// Document is one document: its text plus any other fields the client sent,
// which are returned unchanged with return_documents.
type Document struct {
	Text   string
	Fields map[string]json.RawMessage // other fields, in no particular order
}

// DocumentError is a well-formed JSON value that is not a document (a
// number, null, an array, an object without a string "text"): a
// validation error (HTTP 422), unlike malformed JSON (400).
type DocumentError struct{ Msg string }

func (e *DocumentError) Error() string { return e.Msg }

// jsonKind names the JSON type of a well-formed value for messages.
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == '"':
		return "string"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	case b[0] == 'n':
		return "null"
	}
	return "number"
}

// UnmarshalJSON accepts "text" or {"text": "...", ...}.
func (d *Document) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &d.Text)
	}
	if len(b) == 0 || b[0] != '{' {
		return &DocumentError{fmt.Sprintf("a document must be a string or an object with a \"text\" field, not a JSON %s", jsonKind(b))}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	raw, ok := fields["text"]
	if !ok {
		return &DocumentError{"document object has no \"text\" field"}
	}
	if err := json.Unmarshal(bytes.TrimSpace(raw), &d.Text); err != nil {
		return &DocumentError{fmt.Sprintf("document \"text\" must be a string, not a JSON %s", jsonKind(bytes.TrimSpace(raw)))}
	}
	delete(fields, "text")
	if len(fields) > 0 {
		d.Fields = fields
	}
	return nil
}

// MarshalJSON writes {"text": ..., other fields...}.
func (d Document) MarshalJSON() ([]byte, error) {
	m := make(map[string]json.RawMessage, len(d.Fields)+1)
	for k, v := range d.Fields {
		m[k] = v
	}
	t, err := json.Marshal(d.Text)
	if err != nil {
		return nil, err
	}
	m["text"] = t
	return json.Marshal(m)
}

// RerankResponse answers a Cohere/Jina-style request.
type RerankResponse struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Backend string         `json:"backend"` // which scorer answered (onnx model or lexical default)
	Results []RerankResult `json:"results"` // highest score first
	Meta    Meta           `json:"meta"`
	Usage   Usage          `json:"usage"`
}

// RerankResult is one scored document.
type RerankResult struct {
	Index          int       `json:"index"`
	RelevanceScore float64   `json:"relevance_score"`
	Document       *Document `json:"document,omitempty"`
	// Truncated says the document was cut to fit the model.
	Truncated bool `json:"truncated,omitempty"`
}

// Meta follows Cohere's shape.
type Meta struct {
	APIVersion  APIVersion  `json:"api_version"`
	BilledUnits BilledUnits `json:"billed_units"`
	Tokens      TokenCounts `json:"tokens"`
}

// APIVersion names the API revision.
type APIVersion struct {
	Version string `json:"version"`
}

// BilledUnits counts one search unit per request, as Cohere does.
type BilledUnits struct {
	SearchUnits int `json:"search_units"`
}

// TokenCounts counts the tokens the model read.
type TokenCounts struct {
	InputTokens int `json:"input_tokens"`
}

// Usage follows Jina's shape.
type Usage struct {
	TotalTokens int `json:"total_tokens"`
}

// TEIResult is one element of the text-embeddings-inference answer.
type TEIResult struct {
	Index int     `json:"index"`
	Score float64 `json:"score"`
	Text  *string `json:"text,omitempty"`
}

// Error is the one JSON shape of every error response. Message repeats
// Error: Cohere's API answers errors as {"message": ...}, and clients built
// for it (the Vercel AI SDK's Cohere provider among them) show only that
// field. Build one with NewError so the two never differ.
type Error struct {
	Error     string `json:"error"`
	Message   string `json:"message"`
	ErrorType string `json:"error_type"`
}

// NewError returns the error body for a message and an error kind.
func NewError(msg, errorType string) Error {
	return Error{Error: msg, Message: msg, ErrorType: errorType}
}

// Info answers GET /info.
type Info struct {
	Version           string  `json:"version"`
	ModelID           string  `json:"model_id"`
	Backend           string  `json:"backend"`
	MaxDocuments      int     `json:"max_documents"`
	MaxTokens         int     `json:"max_tokens"`         // prompt length limit
	MaxTokensPerDoc   int     `json:"max_tokens_per_doc"` // default document cut (0: none)
	MaxBatchTokens    int     `json:"max_batch_tokens"`   // engine call budget (padded)
	MaxBatchRequests  int     `json:"max_batch_requests"` // rows per engine call
	MaxQueuePairs     int     `json:"max_queue_pairs"`    // waiting pairs before 429
	MaxBodyBytes      int     `json:"max_body_bytes"`
	RequestTimeoutSec float64 `json:"request_timeout_s"`
	Runtime           string  `json:"runtime,omitempty"` // ONNX Runtime version
	// Calibration describes the loaded calibration file, if any.
	Calibration *CalibrationInfo `json:"calibration,omitempty"`
	// Truncation says how documents are cut, and why.
	Truncation *TruncationInfo `json:"truncation,omitempty"`
	// Engine says how the neural model runs, and why (absent for the
	// lexical backend).
	Engine *EngineInfo `json:"engine,omitempty"`
	// Template is the prompt template in use (absent for the lexical
	// backend).
	Template *TemplateInfo `json:"template,omitempty"`
	// Memory describes the memory store and this replica's indexes of it
	// (absent when the memory API is off).
	Memory *MemoryInfo `json:"memory,omitempty"`
	// Architecture is the served model's config.json architecture (absent
	// for the lexical backend and folders without config.json).
	Architecture string `json:"architecture,omitempty"`
	// SupportedModels lists the model classes this build serves.
	SupportedModels []ModelClass `json:"supported_models,omitempty"`
	// ServedModelNames are the reranker's names (the first is the one
	// responses carry); GET /v1/models lists them.
	ServedModelNames []string `json:"served_model_names,omitempty"`
	// StrictModelName: a request naming a model the server does not serve
	// is refused (404 model_not_found) instead of answered by the served one.
	StrictModelName bool `json:"strict_model_name"`
	// Embedder describes the embedding model of /v1/embeddings and /embed
	// (absent when the server runs none).
	Embedder *EmbedderInfo `json:"embedder,omitempty"`
	// RandomWeights is set when the reranker's folder carries the test
	// model generator's random-weights marker; Warnings then says that
	// its scores mean nothing (and any other warning about the setup).
	RandomWeights bool     `json:"random_weights,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// EmbedderInfo is /info's section on the served embedding model.
type EmbedderInfo struct {
	// Names are its served names; the first is the one responses carry.
	Names []string `json:"names"`
	// Dimensions is the size of its vectors.
	Dimensions int `json:"dimensions"`
	// Matryoshka: requests may ask for shorter vectors (dimensions).
	Matryoshka bool `json:"matryoshka"`
	// MaxInputTokens is the most tokens of one input, prompt and template
	// included; longer inputs are cut (or refused, on /embed without truncate).
	MaxInputTokens int `json:"max_input_tokens"`
	// RandomWeights: the embedding model carries the random-weights
	// marker (its vectors mean nothing; /info's warnings say so).
	RandomWeights bool `json:"random_weights,omitempty"`
	// MaxInputTokensFrom says where MaxInputTokens came from (BGE-M3:
	// sentence_bert_config.json max_seq_length).
	MaxInputTokensFrom string `json:"max_input_tokens_from,omitempty"`
	// MaxInputs is the most inputs of one request.
	MaxInputs int `json:"max_inputs"`
	// MaxQueueTexts is the most texts waiting or embedded at once, shared
	// with the memory search; a request that would pass it gets 429.
	MaxQueueTexts int `json:"max_queue_texts"`
	// PromptNames are the model folder's named prompts (prompt_name).
	PromptNames []string `json:"prompt_names,omitempty"`
}

// ModelClass is one model architecture rerankd serves.
type ModelClass struct {
	// Architecture is config.json's architectures entry.
	Architecture string `json:"architecture"`
	// Kind is reranker or embedding.
	Kind string `json:"kind"`
	// Examples are Hugging Face repo ids of the class.
	Examples []string `json:"examples"`
}

// MemoryInfo is what /info reports of the memory API's store: an embedded
// bbolt file held by this process, or a database shared by replicas whose
// indexes each replica builds and keeps current (the fields after Shared
// apply to a shared store only).
type MemoryInfo struct {
	// Shared is true for a PostgreSQL store shared by replicas.
	Shared bool `json:"shared"`
	// VectorDim is the vector index's dimension (0: lexical only).
	VectorDim int `json:"vector_dim"`
	// IndexMemoryBytes bounds this replica's indexes (0: no bound).
	IndexMemoryBytes int64 `json:"index_memory_bytes,omitempty"`
	// CatchUpS is how long a search waits for its namespace's indexes
	// to reach every acknowledged write before answering 503.
	CatchUpS float64 `json:"catch_up_s,omitempty"`
	// ResidentNamespaces and IndexBytes: the namespaces this replica
	// holds indexes of now, and their estimated size.
	ResidentNamespaces int   `json:"resident_namespaces,omitempty"`
	IndexBytes         int64 `json:"index_bytes,omitempty"`
	// StoreError is why the shared store cannot be used now (a server
	// that does not answer, a refused login, a missing database, a schema
	// conflict); absent while it can. /ready gives probes only a generic
	// reason: the database's address, user and messages are told here,
	// behind the API keys.
	StoreError string `json:"store_error,omitempty"`
}

// TemplateInfo is a reranker's prompt template as /info reports it: the
// prompt is Prefix + Instruction + Query + Document + Suffix with their
// placeholders filled; the score is logit(YesID) - logit(NoID).
type TemplateInfo struct {
	Name               string `json:"name"`
	Source             string `json:"source"`
	Prefix             string `json:"prefix"`
	Instruction        string `json:"instruction"`
	Query              string `json:"query"`
	Document           string `json:"document"`
	Suffix             string `json:"suffix"`
	DefaultInstruction string `json:"default_instruction,omitempty"`
	YesToken           string `json:"yes_token,omitempty"`
	NoToken            string `json:"no_token,omitempty"`
	YesID              int    `json:"yes_id"`
	NoID               int    `json:"no_id"`
}

// EngineInfo is the neural engine's layout /info reports, with the
// measurements the defaults follow.
type EngineInfo struct {
	// Quant is the weights that run: fp32, or int8 when asked for.
	Quant string `json:"quant"`
	// Threads is ONNX Runtime's intra-op threads per call; Workers the
	// concurrent engine calls.
	Threads int `json:"threads"`
	Workers int `json:"workers"`
	// SharedPrefix: the shared-prefix graph runs; PrefixCacheMB is its
	// cross-request cache (0: off, or an engine that has none, as
	// cross-encoders).
	SharedPrefix  bool `json:"shared_prefix"`
	PrefixCacheMB int  `json:"prefix_cache_mb"`
	// FusedAttention: the shared-prefix graph that runs is the folder's
	// CPU attention form (one fused Attention kernel per layer and bucket;
	// --attention-form).
	FusedAttention bool `json:"fused_attention"`
	// SessionCache: the optimised session is kept on disk (--session-cache).
	SessionCache bool `json:"session_cache"`
	// Prepacked: the weights were packed into the CPU kernels' layout at
	// start (--prepack); Prefetch: the mapped weights were read ahead
	// while the session built (--prefetch).
	Prepacked bool `json:"prepacked"`
	Prefetch  bool `json:"prefetch"`
	// Provider is the execution provider the sessions run on (cpu, cuda,
	// tensorrt: a session that cannot enable it fails to open, there is
	// no silent fallback); Device the GPU's id.
	Provider string `json:"provider"`
	Device   int    `json:"device"`
	// Reason explains the defaults and what to measure before changing
	// them; Docs names the page with the measurements behind them (one
	// machine's, so they stay out of the answer).
	Reason string `json:"reason"`
	Docs   string `json:"docs"`
}

// TruncationInfo is the truncation policy /info reports: the limits and
// the reason for them (the measured default, or the operator's choice).
type TruncationInfo struct {
	// MaxLength is the most tokens of one prompt, template included.
	MaxLength int `json:"max_length"`
	// MaxTokensPerDoc is the server's per-document cut; 0: none.
	MaxTokensPerDoc int `json:"max_tokens_per_doc"`
	// PerDocCut says whether MaxTokensPerDoc applies.
	PerDocCut bool `json:"per_doc_cut"`
	// ModelCardMaxLength is the longest input the model card scores
	// (Qwen3-Reranker's 8192); absent for models without such a card
	// figure (cross-encoders, the lexical backend).
	ModelCardMaxLength int `json:"model_card_max_length,omitempty"`
	// ModelMaxLength is the longest input the model itself takes (a
	// cross-encoder's position embeddings), when it has such a limit;
	// ModelMaxLengthFrom names the file and field it comes from.
	ModelMaxLength     int    `json:"model_max_length,omitempty"`
	ModelMaxLengthFrom string `json:"model_max_length_from,omitempty"`
	// Source is where MaxLength came from: "default" (rerankd's default
	// prompt limit), "operator" (--max-length or --max-tokens-per-doc set),
	// "model" (the model's own limit, below what was asked) or "none"
	// (a backend that never cuts).
	Source string `json:"source"`
	// Reason explains the choice (latency against fidelity); Docs names
	// the page with the measurements behind the defaults.
	Reason string `json:"reason"`
	Docs   string `json:"docs"`
}

// CalibrationInfo is the part of a calibration file /info reports.
type CalibrationInfo struct {
	Method string `json:"method"`
	// Threshold is applied when a request sends none.
	Threshold float64 `json:"threshold"`
	Rule      string  `json:"rule"`
	// Pipeline and Data say what the calibration was fitted on.
	Pipeline string `json:"pipeline"`
	Data     string `json:"data"`
}
