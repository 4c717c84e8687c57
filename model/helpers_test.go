package model

import (
	"sync"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/tokenizer"
)

var (
	tokOnce sync.Once
	tok     *tokenizer.Tokenizer
	tokErr  error
)

func qwenTokenizer(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	tokOnce.Do(func() { tok, tokErr = tokenizer.Shared(testenv.TokenizerDir()) })
	if tokErr != nil {
		tb.Fatalf("Qwen3 tokenizer: %v (run scripts/setup.sh)", tokErr)
	}
	return tok
}

// withTok gives o the shared Qwen tokenizer, which a test's embedding
// folder carries (with its own post-processor, read separately).
func withTok(tb testing.TB, o EmbedderOptions) EmbedderOptions {
	o.LoadedTokenizer = qwenTokenizer(tb)
	return o
}
