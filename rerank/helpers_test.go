package rerank

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
