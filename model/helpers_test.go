package model

import (
	"testing"

	"github.com/rerankd/rerankd/internal/tokentest"
)

// withTok gives o the shared Qwen tokenizer, which a test's embedding
// folder carries (with its own post-processor, read separately).
func withTok(tb testing.TB, o EmbedderOptions) EmbedderOptions {
	o.LoadedTokenizer = tokentest.Qwen(tb)
	return o
}
