package serve

import (
	"fmt"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/rerank"
)

// DefaultMaxTokensPerDoc is the default per-document cut: none. The one
// default limit is the prompt's maximum length (rerank.DefaultPromptConfig,
// 1024 tokens), so a document keeps every token the prompt has room for
// and truncated: true means exactly "did not fit max-length".
const DefaultMaxTokensPerDoc = rerank.DefaultMaxDocTokens

// ModelCardMaxLength is the longest input the Qwen3-Reranker model card
// scores (8192 tokens: "Context Length: 8192" in its table; the card's
// Transformers usage sets max_length = 8192). A longer prompt limit is
// possible but is outside what the card evaluates.
const ModelCardMaxLength = 8192

// DefaultTruncationReason says why the default limits are what they are.
// The measurements behind it (one pair's time by document length, on a
// model of Qwen3-Reranker-0.6B's dimensions) are in TruncationDocs: past
// 1024 tokens one long document costs more than a whole 20-memory request
// on CPU, and at 4096 it passes the default request timeout.
const DefaultTruncationReason = "latency over fidelity on CPU: prompts are cut at 1024 tokens (template included) " +
	"and there is no separate per-document cut, so a document keeps every token the prompt has room for; " +
	"the model card scores up to 8192 tokens, so a longer document is cut (truncated: true) and its score differs from the card's. " +
	"On CPU a pair's cost grows faster than its length; on a GPU raise --max-length towards 8192 for fidelity."

// TruncationDocs names the page with the measurements behind the default
// cut (one pair's time by length), which /info points to.
const TruncationDocs = "docs/user/models.md#truncation"

// Where a backend's maximum length came from (api.TruncationInfo.Source).
const (
	SourceDefault  = "default"
	SourceOperator = "operator"
	SourceModel    = "model"
	SourceNone     = "none"
)

// truncationInfo describes the limits a server applies, and why.
func truncationInfo(cfg Config, maxLength int) *api.TruncationInfo {
	t := &api.TruncationInfo{MaxLength: maxLength, MaxTokensPerDoc: cfg.MaxTokensPerDoc,
		PerDocCut: cfg.MaxTokensPerDoc > 0, ModelCardMaxLength: ModelCardMaxLength, Docs: TruncationDocs}
	perDoc := "no per-document cut"
	if cfg.MaxTokensPerDoc > 0 {
		perDoc = fmt.Sprintf("documents cut at %d tokens", cfg.MaxTokensPerDoc)
	}
	switch {
	case maxLength == 0:
		t.Source, t.Reason = SourceNone, "this backend has no token limit: documents are never cut"
		t.ModelCardMaxLength = 0
	case cfg.ModelMaxLength > 0: // a model with its own limit (a cross-encoder), no model-card figure
		t.ModelCardMaxLength, t.ModelMaxLength, t.ModelMaxLengthFrom = 0, cfg.ModelMaxLength, cfg.ModelMaxLengthFrom
		if maxLength >= cfg.ModelMaxLength {
			t.Source = SourceModel
			t.Reason = fmt.Sprintf("the model's own limit: %d tokens (%s); pairs are cut to it, special tokens included, %s", cfg.ModelMaxLength, cfg.ModelMaxLengthFrom, perDoc)
		} else {
			t.Source = SourceOperator
			t.Reason = fmt.Sprintf("set by the operator (--max-length %d, --max-tokens-per-doc %d): pairs cut at %d tokens, %s; the model takes up to %d (%s)",
				maxLength, cfg.MaxTokensPerDoc, maxLength, perDoc, cfg.ModelMaxLength, cfg.ModelMaxLengthFrom)
		}
		if maxLength >= cfg.ModelMaxLength && cfg.MaxTokensPerDoc != DefaultMaxTokensPerDoc {
			t.Source = SourceOperator
		}
	case maxLength == rerank.DefaultPromptConfig().MaxLength && cfg.MaxTokensPerDoc == DefaultMaxTokensPerDoc:
		t.Source, t.Reason = SourceDefault, DefaultTruncationReason
	default:
		t.Source = SourceOperator
		t.Reason = fmt.Sprintf("set by the operator (--max-length %d, --max-tokens-per-doc %d): prompts cut at %d tokens, %s; "+
			"the model card scores up to %d. The defaults (1024, 0): %s",
			maxLength, cfg.MaxTokensPerDoc, maxLength, perDoc, ModelCardMaxLength, DefaultTruncationReason)
	}
	return t
}

// docLimit is the per-document cut of one request: the server's, lowered
// by the request's max_tokens_per_doc; either 0 means no limit from it.
func docLimit(server, request int) int {
	switch {
	case request <= 0:
		return server
	case server <= 0:
		return request
	}
	return min(server, request)
}
